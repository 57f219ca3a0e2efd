"""U11 and U12 on the citation forms real models write (legaltext/citations.py, pipeline/stages/verify.py,
pipeline/stages/deliver.py): every form is found, bound to the right act, checked against the evidence, and
whatever is not supported is cut out of the answer."""

from __future__ import annotations

import pytest

from legaltext.citations import basis_first, find_citations
from pipeline.contracts import AssembledPrompt, CoverageGap, Draft, LawSourceRef
from pipeline.stages.deliver import REMOVED, deliver
from pipeline.stages.verify import verify

# The catalog's labels as the runner passes them: the canonical label of each act first.
LABELS = {"КЗпП": "322-08", "Закон «Про відпустки»": "504/96-ВР", "ЦК": "435-15", "КУпАП": "80731-10",
          "КУ": "254к/96-ВР", "Житловий Кодекс України": "5464-10", "Закон «Про оплату праці»": "108/95-ВР",
          "КК": "2341-14", "КПК": "4651-17"}
EVIDENCE = ("КЗпП ст. 36", "КЗпП ст. 40", "КЗпП ст. 75", "Закон «Про відпустки» ст. 6", "Закон «Про відпустки» ст. 12")
PROMPT = AssembledPrompt(meta={"mode": "law"}, budget={"law_chars": 0},
                         law_source_refs=[LawSourceRef(article_ref=r, r2_key=f"k{i}", score=0.9)
                                          for i, r in enumerate(EVIDENCE)])

FORMS = [
    pytest.param("Відповідно до ст. 36 КЗпП договір припиняється.", "ст. 36 КЗпП", "КЗпП ст. 36", "label",
                 id="article-then-abbreviation"),
    pytest.param("Це встановлено статтею 36 Кодексу законів про працю України.",
                 "статтею 36 Кодексу законів про працю України", "КЗпП ст. 36", "initials", id="inflected-code-title"),
    pytest.param("Так каже частина третя статті 40 КЗпП.", "частина третя статті 40 КЗпП", "КЗпП ст. 40", "label",
                 id="part-words"),
    pytest.param("Див. ч. 3 ст. 40 КЗпП.", "ч. 3 ст. 40 КЗпП", "КЗпП ст. 40", "label", id="part-abbreviated"),
    pytest.param("Тут важлива частина третя статті 40.", "частина третя статті 40", "КЗпП ст. 40", "evidence",
                 id="no-act-one-evidence-article"),
    pytest.param("«Закон «Про відпустки» ст. 6» визначає 24 дні.", "Закон «Про відпустки» ст. 6",
                 "Закон «Про відпустки» ст. 6", "label", id="canonical-in-guillemets"),
    pytest.param("Згідно зі статті 6 Закону України «Про відпустки» — 24 дні.",
                 "статті 6 Закону України «Про відпустки»", "Закон «Про відпустки» ст. 6", "quoted",
                 id="law-quoted-title-after"),
    pytest.param("Так визначає стаття 6 Закону про відпустки.", "стаття 6 Закону про відпустки",
                 "Закон «Про відпустки» ст. 6", "title", id="law-unquoted-title"),
    pytest.param("Див. статтю 12 Цивільного кодексу.", "статтю 12 Цивільного кодексу", "ЦК ст. 12", "initials",
                 id="civil-code"),
    pytest.param("Штраф за ч. 2 ст. 185 КУпАП.", "ч. 2 ст. 185 КУпАП", "КУпАП ст. 185", "label", id="kupap"),
    pytest.param("Гарантовано статтею 43 Конституції України.", "статтею 43 Конституції України", "КУ ст. 43",
                 "initials", id="constitution"),
    pytest.param("За статтею 9 Житлового кодексу України.", "статтею 9 Житлового кодексу України",
                 "Житловий Кодекс України ст. 9", "title", id="code-without-abbreviation"),
    pytest.param("Згідно з КПК ст. 2 і далі.", "КПК ст. 2", "КПК ст. 2", "label", id="canonical"),
]


@pytest.mark.parametrize(("text", "span", "ref", "how"), FORMS)
def test_every_form_is_found_bound_to_its_act_and_spans_the_whole_mention(text: str, span: str, ref: str,
                                                                          how: str) -> None:
    # when
    (found,) = find_citations(text, LABELS, evidence=EVIDENCE)
    # then
    assert (found.article_ref, found.how) == (ref, how)
    assert found.act_nreg == LABELS[ref.rsplit(" ст. ", 1)[0]]
    assert text[found.start:found.end] == span


def test_a_list_of_articles_shares_its_act() -> None:
    found = find_citations("За ст. 36, 40 КЗпП та статтями 75 і 76 цього Кодексу.", LABELS)
    assert [(c.article_ref, c.how) for c in found] == [("КЗпП ст. 36", "label"), ("КЗпП ст. 40", "label"),
                                                       ("КЗпП ст. 75", "this_act"), ("КЗпП ст. 76", "this_act")]


def test_this_law_binds_to_the_law_last_named_not_to_a_code() -> None:
    text = "Відпустка (Закон «Про відпустки» ст. 6) за КЗпП ст. 75 переноситься згідно зі статтею 12 цього Закону."
    assert [c.article_ref for c in find_citations(text, LABELS)][-1] == "Закон «Про відпустки» ст. 12"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("Податкова знижка (статті 167 Податкового кодексу України).",
                     ("Податкового кодексу України ст. 167", "unknown"), id="code-not-in-catalog"),
        pytest.param("Див. статтю 5 Закону України «Про неіснуюче».", ("Закон «Про неіснуюче» ст. 5", "unknown"),
                     id="law-not-in-catalog"),
        pytest.param("Див. ПКУ ст. 14.", ("ПКУ ст. 14", "unknown"), id="abbreviation-not-in-catalog"),
        pytest.param("Про це стаття 6.", ("ст. 6", "unbound"), id="no-act-two-evidence-articles"),
        pytest.param("Про це стаття 99.", ("ст. 99", "unbound"), id="no-act-no-evidence-article"),
        pytest.param("За статтею 12 цього Закону.", ("ст. 12", "unbound"), id="this-law-with-nothing-before"),
    ],
)
def test_mentions_that_cannot_be_placed_are_kept_unbound(text: str, expected: tuple[str, str]) -> None:
    evidence = (*EVIDENCE, "КЗпП ст. 6")  # article 6 of two acts: a bare "стаття 6" is ambiguous
    (found,) = find_citations(text, LABELS, evidence=evidence)
    assert (found.article_ref, found.how) == expected and found.act_nreg is None


def test_an_act_less_mention_takes_the_act_named_earlier_in_its_sentence_not_the_evidences() -> None:
    # given article 7 in the evidence only for the Labour Code
    text = "Відпустка — Закон «Про відпустки» ст. 6 та ст. 7. Окремо стаття 7."
    found = find_citations(text, LABELS, evidence=(*EVIDENCE, "КЗпП ст. 7"))
    # then the second mention is the Law's article 7 as the reader reads it; the third, alone, is placed by evidence
    assert [(c.article_ref, c.how) for c in found] == [("Закон «Про відпустки» ст. 6", "label"),
                                                       ("Закон «Про відпустки» ст. 7", "inherited"),
                                                       ("КЗпП ст. 7", "evidence")]


QUOTE_OF_LAW = ("Коротко: Щорічна відпустка збільшується у випадках, передбачених частиною другою статті 12 цього "
                "Закону, за згодою сторін (Закон «Про відпустки» ст. 6).")


def test_a_mention_inside_a_quote_is_the_quoted_sources_article() -> None:
    # given the offline writer's form: a verbatim sentence of a law, its source in parentheses after it
    found = find_citations(QUOTE_OF_LAW, LABELS, evidence=EVIDENCE)
    # then "статті 12 цього Закону" is the quoted law's article 12 (nothing before it names an act)
    assert [(c.article_ref, c.how) for c in found] == [("Закон «Про відпустки» ст. 12", "source"),
                                                       ("Закон «Про відпустки» ст. 6", "label")]


def test_this_law_in_a_second_quote_is_its_own_source_not_the_law_quoted_above() -> None:
    # given two quotes of two laws, the second referring to "статтею 3 цього Закону"
    text = ("Коротко: Відпустка становить 24 дні (Закон «Про відпустки» ст. 6).\n"
            "— Мінімальна заробітна плата встановлюється статтею 3 цього Закону (Закон «Про оплату праці» ст. 10).")
    found = find_citations(text, LABELS)
    # then article 3 is the Law on Remuneration's, as its own text says — not the Law on Leave's
    assert [(c.article_ref, c.how) for c in found] == [("Закон «Про відпустки» ст. 6", "label"),
                                                       ("Закон «Про оплату праці» ст. 3", "source"),
                                                       ("Закон «Про оплату праці» ст. 10", "label")]
    # while in one sentence the law named before still binds it
    same = find_citations("Відпустка — Закон «Про відпустки» ст. 6, а перенесення — за статтею 12 цього Закону "
                          "(Закон «Про оплату праці» ст. 10).", LABELS)
    assert [c.article_ref for c in same][1] == "Закон «Про відпустки» ст. 12"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Див. статтю 12 цього Закону. Інше (Закон «Про відпустки» ст. 6).", id="source-in-next-sentence"),
        pytest.param("За статтею 12 цього Закону і Закон «Про відпустки» ст. 6.", id="source-not-in-parentheses"),
        pytest.param("Строки за статтею 12 цього Кодексу (Закон «Про відпустки» ст. 6).",
                     id="a-code-quoted-from-a-law"),
    ],
)
def test_a_mention_outside_a_quoted_sources_sentence_stays_unbound(text: str) -> None:
    first = find_citations(text, LABELS, evidence=EVIDENCE)[0]
    assert (first.article_ref, first.how, first.act_nreg) == ("ст. 12", "unbound", None)


def test_a_quote_that_names_another_article_of_its_source_verifies_without_a_retry() -> None:
    # given the quote above and both articles in the evidence: before, "ст. 12" was an unknown act → retry_write
    result = verify(draft(QUOTE_OF_LAW), PROMPT, LABELS, None)
    assert result.verdict == "complete"
    assert {c.article_ref: c.status for c in result.citations} == {"Закон «Про відпустки» ст. 12": "supported",
                                                                   "Закон «Про відпустки» ст. 6": "supported"}
    # and the answer rests on the quoted article: it is the first citation, the one the quote mentions follows
    answer = deliver(draft(QUOTE_OF_LAW), result, LABELS, "partial", None)
    assert answer.text == QUOTE_OF_LAW
    assert [c.article_ref for c in answer.citations] == ["Закон «Про відпустки» ст. 6", "Закон «Про відпустки» ст. 12"]


QUOTE_NAMING_ANOTHER_ACT = ("Коротко: Працівникам, які працюють у нічний час, оплата провадиться відповідно до "
                            "статті 108 Кодексу законів про працю України у підвищеному розмірі (Закон «Про оплату "
                            "праці» ст. 10).\n— Робота в нічний час оплачується в підвищеному розмірі (КЗпП ст. 40).")


def test_an_article_of_another_act_a_quote_mentions_follows_the_quotes_source() -> None:
    # given a quote of one law that names another act's article on its way, its source in parentheses after it
    found = find_citations(QUOTE_NAMING_ANOTHER_ACT, LABELS)
    assert [(c.article_ref, c.in_passing) for c in found] == [
        ("КЗпП ст. 108", True), ("Закон «Про оплату праці» ст. 10", False), ("КЗпП ст. 40", False)]
    # then the answer rests on the quoted article: the delivered citations put it first, the mentioned one after
    # the sources (before, "КЗпП ст. 108" came first in reading order)
    evidence = ("Закон «Про оплату праці» ст. 10", "КЗпП ст. 108", "КЗпП ст. 40")
    prompt = AssembledPrompt(meta={"mode": "law"}, budget={"law_chars": 0},
                             law_source_refs=[LawSourceRef(article_ref=r, r2_key=f"k{i}", score=0.9)
                                              for i, r in enumerate(evidence)])
    result = verify(draft(QUOTE_NAMING_ANOTHER_ACT), prompt, LABELS, None)
    answer = deliver(draft(QUOTE_NAMING_ANOTHER_ACT), result, LABELS, "partial", None)
    assert [c.article_ref for c in answer.citations] == ["Закон «Про оплату праці» ст. 10", "КЗпП ст. 40",
                                                         "КЗпП ст. 108"]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Відповідно до ст. 108 КЗпП нічна робота оплачується більше. Інше (КЗпП ст. 40).",
                     id="source-in-next-sentence"),
        pytest.param("За ст. 108 КЗпП і КЗпП ст. 40 оплата підвищена.", id="no-parentheses"),
        pytest.param("Оплата підвищена (КЗпП ст. 108) — так само й тут (КЗпП ст. 40).", id="itself-a-source"),
    ],
)
def test_a_mention_in_the_answers_own_words_keeps_its_place(text: str) -> None:
    found = find_citations(text, LABELS)
    assert [c.in_passing for c in found] == [False, False]
    assert [c.article_ref for c in basis_first(found)] == ["КЗпП ст. 108", "КЗпП ст. 40"]


def test_numbers_that_are_not_articles_are_not_read_as_a_list() -> None:
    found = find_citations("Згідно зі статтею 36, 5 працівників звільнено; тест. 7 не стаття.", LABELS)
    assert [c.article for c in found] == ["36"]


def test_titles_from_the_catalog_place_an_inflected_name_labels_alone_cannot() -> None:
    # given an act without abbreviation whose label is a «Закон «…»» and an alias only the catalog knows
    titles = {"Кодекс законів про працю України": "322-08"}
    (found,) = find_citations("За статтею 36 Кодексу законів про працю.", {"КЗпП": "322-08"}, titles=titles)
    assert (found.article_ref, found.how) in {("КЗпП ст. 36", "title"), ("КЗпП ст. 36", "initials")}


def test_an_act_without_a_title_does_not_turn_every_mention_into_its_citation() -> None:
    (found,) = find_citations("Див. статтю 75.", {"": "1075-14", "КЗпП": "322-08"}, evidence=["КЗпП ст. 75"])
    assert (found.article_ref, found.act_nreg) == ("КЗпП ст. 75", "322-08")


# --- U11 statuses and U12 on free forms ---------------------------------------------------------------------
def draft(text: str) -> Draft:
    return Draft(text=text, citations=[], provider="openai", model="gpt-4o-mini", attempt=1)


VERIFY = [
    pytest.param("Звільнення за статтею 36 Кодексу законів про працю України та ч. 3 ст. 40 КЗпП.", "complete",
                 {"КЗпП ст. 36": "supported", "КЗпП ст. 40": "supported"}, id="free-forms-supported"),
    pytest.param("24 дні (статті 6 Закону України «Про відпустки»), а за статтею 147 КЗпП — догана.",
                 "retry_write", {"Закон «Про відпустки» ст. 6": "supported", "КЗпП ст. 147": "not_in_evidence"},
                 id="free-form-outside-evidence"),
    pytest.param("Відпустка 24 дні (КЗпП ст. 75), знижка — статті 167 Податкового кодексу України.", "retry_write",
                 {"КЗпП ст. 75": "supported", "Податкового кодексу України ст. 167": "unknown_act"},
                 id="code-not-in-catalog"),
    pytest.param("Відпустка 24 дні (КЗпП ст. 75). Див. також статтю 6.", "retry_write",
                 {"КЗпП ст. 75": "supported", "ст. 6": "unknown_act"}, id="act-less-ambiguous"),
    pytest.param("Відпустка — Закон «Про відпустки» ст. 6 та ст. 7.", "retry_write",
                 {"Закон «Про відпустки» ст. 6": "supported", "Закон «Про відпустки» ст. 7": "not_in_evidence"},
                 id="act-less-in-the-sentence-of-a-named-act"),
]


@pytest.mark.parametrize(("text", "verdict", "statuses"), VERIFY)
def test_verify_checks_free_forms_against_the_evidence(text: str, verdict: str, statuses: dict[str, str]) -> None:
    prompt = PROMPT.model_copy(update={"law_source_refs": [*PROMPT.law_source_refs,
                                                           LawSourceRef(article_ref="ЦК ст. 6", r2_key="x",
                                                                        score=0.5),
                                                           LawSourceRef(article_ref="КЗпП ст. 7", r2_key="y",
                                                                        score=0.5)]})
    result = verify(draft(text), prompt, LABELS, None)
    assert result.verdict == verdict
    assert {c.article_ref: c.status for c in result.citations} == statuses


def test_a_free_form_citation_of_an_act_in_the_coverage_gap_is_not_supported() -> None:
    gap = CoverageGap(reason="ACT_FOUND_IN_CATALOG_NOT_INDEXED", acts=[{"nreg": "504/96-ВР", "title": "Про відпустки"}])
    result = verify(draft("Так (статті 6 Закону України «Про відпустки»)."), PROMPT, LABELS, gap)
    assert [(c.article_ref, c.status) for c in result.citations] == [("Закон «Про відпустки» ст. 6", "not_in_evidence")]


FABRICATIONS = [
    "Відпустка — 24 дні (статті 6 Закону України «Про відпустки»); звільнення у відпустці заборонено статтею 147 "
    "Кодексу законів про працю України.",
    "За ст. 36, 147 КЗпП та статтями 75 і 200 цього Кодексу; див. також ПКУ ст. 14 та частину першу статті 99.",
    "Стаття 6 каже одне, «Закон «Про оплату праці» ст. 3» — інше, а стаття 12 цього Закону — третє.",
    "Гарантії — статтею 43 Конституції України, відпустка — КЗпП ст. 75.",
]


@pytest.mark.parametrize("text", FABRICATIONS)
def test_nothing_unsupported_survives_delivery_in_any_form(text: str) -> None:
    # given a draft as U11 verified it
    d = draft(text)
    result = verify(d, PROMPT, LABELS, None)
    # when
    answer = deliver(d, result, LABELS, "strong", None)
    # then every article mention left in the text is an evidence article, and the list says the same
    left = find_citations(answer.text, LABELS, evidence=EVIDENCE)
    assert {c.article_ref for c in left} <= set(EVIDENCE)
    assert all(c.act_nreg for c in left)
    assert {c.article_ref for c in answer.citations} == {c.article_ref for c in left}
    assert answer.removed_citations and answer.support_level == "partial"


def test_a_list_with_one_unsupported_article_keeps_the_rest_in_canonical_form() -> None:
    d = draft("Підстави: ст. 36, 147 КЗпП.")
    answer = deliver(d, verify(d, PROMPT, LABELS, None), LABELS, "strong", None)
    assert answer.text == f"Підстави: КЗпП ст. 36 {REMOVED}."
    assert [c.article_ref for c in answer.citations] == ["КЗпП ст. 36"]
    assert answer.removed_citations == ["КЗпП ст. 147"]


def test_a_supported_free_form_is_delivered_as_written() -> None:
    text = "Звільнення — за статтею 36 Кодексу законів про працю України; частина третя статті 40 теж."
    d = draft(text)
    answer = deliver(d, verify(d, PROMPT, LABELS, None), LABELS, "strong", None)
    assert answer.text == text and answer.support_level == "strong"
    assert [(c.article_ref, c.act_nreg) for c in answer.citations] == [("КЗпП ст. 36", "322-08"),
                                                                       ("КЗпП ст. 40", "322-08")]
