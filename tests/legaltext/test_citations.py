"""Citation parsing (legaltext/citations.py): the canonical "<act label> ст. <n>" form, known and unknown acts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from legaltext import citations
from legaltext.chunking import article_ref, split_ref
from legaltext.citations import find_citations

LABELS = {"КЗпП": "322-08", "Закон «Про відпустки»": "504/96-ВР", "ЦК": "435-15"}

CITATIONS = [
    pytest.param("Відпустка триває 24 дні (КЗпП ст. 75).", [("КЗпП ст. 75", "322-08", "75")], id="abbreviation"),
    pytest.param("Див. Закон «Про відпустки» ст. 6.", [("Закон «Про відпустки» ст. 6", "504/96-ВР", "6")],
                 id="zakon-pro-label"),
    pytest.param("Спрощений режим (КЗпП ст. 49-5).", [("КЗпП ст. 49-5", "322-08", "49-5")], id="hyphenated-article"),
    pytest.param("Право на працю (КЗпП ст. 2-1).", [("КЗпП ст. 2-1", "322-08", "2-1")], id="article-2-1"),
    pytest.param("Податкова знижка (ПКУ ст. 167).", [("ПКУ ст. 167", None, "167")], id="unknown-act-label"),
    pytest.param("Див. КЗпП ст.36", [("КЗпП ст. 36", "322-08", "36")], id="no-space-canonicalised"),
    pytest.param("Згідно з ЦК ст. 15 та КЗпП ст. 75.", [("ЦК ст. 15", "435-15", "15"), ("КЗпП ст. 75", "322-08", "75")],
                 id="two-in-order"),
    pytest.param("У питанні немає жодного посилання.", [], id="none"),
    # an act's final provisions: cited by name, keyed "ПП" (legaltext/chunking.py FINAL_PROVISIONS)
    pytest.param("Кодекс набрав чинності 1 січня 2004 року (ЦК, Прикінцеві та перехідні положення).",
                 [("ЦК, Прикінцеві та перехідні положення", "435-15", "ПП")], id="final-provisions"),
    pytest.param("Див. пункт 2 Прикінцевих положень КЗпП і КЗпП ст. 75.",
                 [("КЗпП, Прикінцеві та перехідні положення", "322-08", "ПП"), ("КЗпП ст. 75", "322-08", "75")],
                 id="final-provisions-genitive-act-after"),
]


@pytest.mark.parametrize(("text", "expected"), CITATIONS)
def test_citations_are_found_with_their_act(text: str, expected: list[tuple[str, str | None, str]]) -> None:
    # when
    found = find_citations(text, LABELS)
    # then
    assert [(c.article_ref, c.act_nreg, c.article) for c in found] == expected


@pytest.mark.parametrize(
    ("text", "span"),
    [
        pytest.param("Відпустка триває 24 дні (КЗпП ст. 75).", "КЗпП ст. 75", id="abbreviation"),
        pytest.param("Див. Закон «Про відпустки» ст. 6.", "Закон «Про відпустки» ст. 6", id="zakon-pro-label"),
        pytest.param("Податкова знижка (ПКУ ст. 167).", "ПКУ ст. 167", id="unknown-act"),
        pytest.param("Див. КЗпП ст.36, далі текст", "КЗпП ст.36", id="no-space"),
    ],
)
def test_start_and_end_cover_exactly_the_citation_text(text: str, span: str) -> None:
    # when
    (found,) = find_citations(text, LABELS)
    # then
    assert text[found.start:found.end] == span


def test_the_longest_label_ending_before_the_article_wins() -> None:
    # given two labels where one is a suffix of the other
    labels = {"ПК": "2755-17", "ЦПК": "1618-15"}
    # when
    (found,) = find_citations("Строк апеляції (ЦПК ст. 354).", labels)
    # then
    assert (found.label, found.act_nreg) == ("ЦПК", "1618-15")


def test_a_quoted_law_title_that_is_not_in_the_labels_is_still_seen_as_a_citation_of_an_unknown_act():
    found = find_citations("Див. Закон «Про оплату праці» ст. 3.", {"КЗпП": "322-08"})

    assert [(c.label, c.article, c.act_nreg) for c in found] == [("Закон «Про оплату праці»", "3", None)]


_LABEL_TEXT = st.text(alphabet="аб «»", min_size=0, max_size=6)


@settings(max_examples=300, deadline=None)
@given(labels=st.lists(_LABEL_TEXT.filter(lambda s: s.strip() != ""), max_size=12), text=_LABEL_TEXT)
def test_bucketed_labels_find_what_a_scan_of_all_labels_finds(labels: list[str], text: str) -> None:
    """The label buckets are an index, not a filter: the labels a mention starts or ends with come back all, in the
    catalog's longest-first order (the first one binds the act)."""
    ordered = tuple(sorted(((label, f"n{i}") for i, label in enumerate(labels)), key=lambda p: len(p[0]),
                           reverse=True))
    index = citations._Labels.of(ordered)
    assert [p for p in index.starting(text) if text.startswith(p[0])] == [
        p for p in ordered if text.startswith(p[0])]
    assert [p for p in index.ending(text) if text.endswith(p[0])] == [p for p in ordered if text.endswith(p[0])]


_POOL_LABELS = ["КЗпП", "ЦК", "КК", "КУпАП", "КУ", "Закон «Про відпустки»", "Закон «Про державну службу»",
                "Закон «Про оплату праці»", "Кодекс законів про працю України", "Цивільний кодекс України"]
_POOL_TITLES = ["Про відпустки", "Про державну службу", "Кодекс законів про працю України", "Цивільний кодекс України",
                "Конституція України", "Про оплату праці"]
_POOL_NREGS = ["322-08", "435-15", "2341-14", "504/96-вр", "889-19", "3723-12", "108/95-вр", "254к/96-вр"]
_FRAGMENTS = ["ст. 5 КЗпП", "статті 6 Закону України «Про відпустки»", "ст. 2 Закону «Про державну службу»",
              "статтею 36 Кодексу законів про працю України", "ст. 7", "ст. 40 цього Кодексу", "ч. 2 ст. 3 ЦК",
              "КУ ст. 43", "Закон «Про оплату праці» ст. 24", "ст. 1, 2 та 4 Цивільного кодексу України",
              "Конституції України ст. 44", "ст. 9 Закону «Про невідомий акт»", "ст. 11 ПКУ", ". ", ", ", " і "]


@settings(max_examples=200, deadline=None)
@given(catalog=st.dictionaries(st.sampled_from(_POOL_LABELS), st.sampled_from(_POOL_NREGS), max_size=10),
       first=st.dictionaries(st.sampled_from(_POOL_LABELS), st.sampled_from(_POOL_NREGS), max_size=3),
       titles=st.dictionaries(st.sampled_from(_POOL_TITLES), st.sampled_from(_POOL_NREGS), max_size=6),
       parts=st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=8), with_titles=st.booleans())
def test_evidence_over_catalog_binds_as_one_mapping_built_evidence_first(
        catalog: dict[str, str], first: dict[str, str], titles: dict[str, str], parts: list[str],
        with_titles: bool) -> None:
    """The layered labels (the catalog's names parsed once per process) bind every mention exactly as the merged
    mapping would — a label the evidence shares with another act, a title, initials, «цього Кодексу»."""
    layered = citations.EvidenceFirst(first, catalog)
    merged = {**first, **{k: v for k, v in catalog.items() if k not in first}}
    assert dict(layered) == merged and list(layered) == list(merged)
    text = " ".join(parts)
    kw = {"titles": titles} if with_titles else {}
    assert find_citations(text, layered, **kw) == find_citations(text, merged, **kw)


def test_final_provisions_named_without_an_act_bind_by_the_evidence() -> None:
    # given one act's final provisions among the evidence
    evidence = ["ЦК, Прикінцеві та перехідні положення", "КЗпП ст. 75"]
    # when the answer names them without the act
    found = find_citations("Це передбачено перехідними положеннями.", LABELS, evidence=evidence)
    # then they are that act's
    assert [(c.article_ref, c.act_nreg, c.how) for c in found] == [
        ("ЦК, Прикінцеві та перехідні положення", "435-15", "evidence")]


@pytest.mark.parametrize("ref", ["КЗпП ст. 75", "Закон «Про відпустки», Прикінцеві та перехідні положення",
                                 "ЦК ст. 1308"])
def test_a_canonical_ref_splits_and_reads_back_as_itself(ref: str) -> None:
    label, article = split_ref(ref)
    assert article_ref(label, article) == ref
    [found] = find_citations(f"Так сказано ({ref}).", LABELS)
    assert (found.article_ref, found.article) == (ref, article)


def test_the_reader_searches_for_the_rarer_mention_once_not_from_every_mention() -> None:
    # given 1,000 article mentions and no mention of final provisions
    text = "Працівник має право (КЗпП ст. 5). " * 1000
    heads = citations._Heads(text)
    pos, found = 0, 0
    while (m := heads.next(pos)) is not None:
        found, pos = found + 1, m.end()
    # then each mention is one search for the next article, and the final provisions were looked for once
    assert found == 1000 and heads.searches <= 1000 + 2
