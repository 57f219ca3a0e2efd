"""U1 intake and U2 query profiling (pipeline/stages/intake.py, pipeline/stages/profiling.py,
legaltext/lexicon.py): explicit article references, act cues, mode."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from legaltext.lexicon import ActLexicon
from pipeline.contracts import Intake, QueryProfile, SpecialistProfile
from pipeline.stages.intake import IntakeError, intake
from pipeline.stages.profiling import profile_query

LEXICON = ActLexicon.build([
    {"nreg": "322-08", "title": "Кодекс законів про працю України", "abbreviations": ["КЗпП"], "aliases": [],
     "indexed": True},
    {"nreg": "435-15", "title": "Цивільний кодекс України", "abbreviations": ["ЦК"], "aliases": [], "indexed": True},
    {"nreg": "80731-10", "title": "Кодекс України про адміністративні правопорушення", "abbreviations": ["КУпАП"],
     "aliases": [], "indexed": True},
    {"nreg": "2755-17", "title": "Податковий кодекс України", "abbreviations": ["ПКУ"], "aliases": [],
     "indexed": False},
    {"nreg": "504/96-ВР", "title": "Про відпустки", "abbreviations": [], "aliases": [], "indexed": True},
    {"nreg": "389-19", "title": "Про правовий режим воєнного стану", "abbreviations": [],
     "aliases": ["воєнний стан"], "indexed": True},  # the catalog's alias: how people refer to the law
    {"nreg": "3674-17", "title": "Про судовий збір", "abbreviations": [], "aliases": [], "indexed": False},
    # the catalog's alias of the mobilisation law: one subject word once «закон» and «про» are set aside
    {"nreg": "3543-12", "title": "Про мобілізаційну підготовку та мобілізацію", "abbreviations": [],
     "aliases": ["закон про мобілізацію"], "indexed": True},
    # the catalog's title and the name people give it share «протидія дискримінації» only
    {"nreg": "5207-17", "title": "Про засади запобігання та протидії дискримінації в Україні", "abbreviations": [],
     "aliases": ["Про протидію дискримінації"], "indexed": True},
    # the Housing Code's abbreviation is «ЖКУ» only: «ЖК» alone is as often a housing estate
    {"nreg": "5464-10", "title": "Житловий Кодекс України", "abbreviations": ["ЖКУ"], "aliases": [], "indexed": True},
    # the catalog's one-word name of the Constitution is an "abbreviation"; its title's other word names nothing
    {"nreg": "254к/96-ВР", "title": "Конституція України", "abbreviations": ["КОНСТИТУЦІЯ", "КУ"], "aliases": [],
     "indexed": True},
])


def take(question: str, max_chars: int = 4000) -> Intake:
    return intake(question=question, specialist=SpecialistProfile(slug="demo"), max_chars=max_chars,
                  now=datetime.now(UTC))


def profile(question: str) -> QueryProfile:
    return profile_query(take(question), LEXICON)


# --- U1 intake ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("question", ["", "   ", " \n\t "], ids=["empty", "spaces", "whitespace-only"])
def test_intake_rejects_an_empty_question(question: str) -> None:
    with pytest.raises(IntakeError, match="empty"):
        take(question)


def test_intake_rejects_a_question_over_the_limit() -> None:
    with pytest.raises(IntakeError, match="limit is 4000"):
        take("а" * 4001)


def test_intake_accepts_a_question_exactly_at_the_limit_and_normalises_it() -> None:
    # given a question padded with whitespace that normalisation removes
    head = "Чи можна звільнити працівника? "
    question = "  Чи можна\n\nзвільнити   працівника? " + "а" * (4000 - len(head))
    # when
    result = take(question)
    # then: within the limit as typed; the question mark U1 adds is not the user's text
    assert result.normalized == head + "а" * (4000 - len(head)) + "?"
    assert result.question == question


# --- U2 article references ----------------------------------------------------------------------------------
ARTICLE_REFS = [
    pytest.param("Що каже ст. 36 про переведення?", [("36", None)], id="st-N"),
    pytest.param("Що каже ст.36 про переведення?", [("36", None)], id="st.N-no-space"),
    pytest.param("Що сказано у статті 36?", [("36", None)], id="statti-N"),
    pytest.param("Що встановлено статтею 116?", [("116", None)], id="statteiu-N"),
    pytest.param("Чи можна звільнити за ч. 3 ст. 40?", [("40", "3")], id="ch-N-st-M"),
    pytest.param("Що визначає частина третя статті 40?", [("40", "3")], id="chastyna-ordinal-statti"),
    pytest.param("Що змінилося у статті 2-1?", [("2-1", None)], id="hyphenated-article"),
    pytest.param("Що кажуть статті 36 та 40?", [("36", None), ("40", None)], id="two-refs-one-phrase"),
    pytest.param("Чи можна звільнити працівника під час лікарняного?", [], id="no-ref"),
]


@pytest.mark.parametrize(("question", "expected"), ARTICLE_REFS)
def test_explicit_article_references_are_extracted(question: str, expected: list[tuple[str, str | None]]) -> None:
    # when
    refs = profile(question).article_refs
    # then
    assert [(r.article, r.part) for r in refs] == expected
    assert all(r.act_nreg is None for r in refs)  # no act is named in these questions
    assert all(r.matched and r.matched in question for r in refs)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        pytest.param("Чи можна звільнити за ст. 36 КЗпП?", [("36", "322-08")], id="abbreviation-after-ref"),
        pytest.param("Чи застосовна ч. 3 ст. 40 КЗпП?", [("40", "322-08")], id="part-and-act"),
        pytest.param("Порівняйте ст. 36 КЗпП та ст. 130 КУпАП.", [("36", "322-08"), ("130", "80731-10")],
                     id="each-ref-binds-its-own-act"),
        pytest.param("Скільки днів дає ст. 6 Закону «Про відпустки»?", [("6", "504/96-ВР")],
                     id="pro-law-title-after-ref"),
        # a code's two letters written small name it only right after an article number
        pytest.param("Що каже ст. 1166 цк про шкоду?", [("1166", "435-15")], id="small-letters-after-ref"),
        pytest.param("Що каже стаття 5 ку?", [("5", "254к/96-ВР")], id="small-constitution-after-ref"),
        # an act's final provisions are one unit (legaltext/chunking.py FINAL_PROVISIONS), fetched like an article
        pytest.param("Що сказано в перехідних положеннях закону про мобілізацію?", [("ПП", "3543-12")],
                     id="final-provisions-then-act"),
        pytest.param("Цивільний кодекс, прикінцеві та перехідні положення: що там про позовну давність?",
                     [("ПП", "435-15")], id="act-then-final-provisions"),
    ],
)
def test_an_act_named_right_after_a_reference_binds_it(question: str, expected: list[tuple[str, str]]) -> None:
    refs = profile(question).article_refs
    assert [(r.article, r.act_nreg) for r in refs] == expected


# --- U2 act cues --------------------------------------------------------------------------------------------
ACT_CUES = [
    pytest.param("Що каже КЗпП про звільнення?", "322-08", "abbreviation", True, "КЗпП", id="abbreviation"),
    pytest.param("Яка відповідальність за КУпАП?", "80731-10", "abbreviation", True, "КУпАП",
                 id="abbreviation-mixed-case"),
    pytest.param("Що каже ЦК про позовну давність?", "435-15", "abbreviation", True, "ЦК", id="short-abbreviation"),
    pytest.param("Що передбачено Податковим кодексом України щодо ПДВ?", "2755-17", "title", False, "ПКУ",
                 id="inflected-title-of-unindexed-act"),
    pytest.param("Що каже акт 322-08 про звільнення?", "322-08", "nreg", True, "КЗпП", id="registration-number"),
    pytest.param("Що передбачає Закон України «Про відпустки» щодо тривалості?", "504/96-ВР", "title", True,
                 "Закон «Про відпустки»", id="pro-law-title"),
    pytest.param("Яка позовна давність за статтею 257 Цивільного кодексу України?", "435-15", "title", True, "ЦК",
                 id="adjective-lemmatised-as-noun"),
]


@pytest.mark.parametrize(("question", "nreg", "how", "indexed", "label"), ACT_CUES)
def test_acts_named_in_the_question_become_act_hints(question: str, nreg: str, how: str, indexed: bool,
                                                     label: str) -> None:
    # when
    hints = profile(question).act_hints
    # then
    assert [(h.nreg, h.how, h.indexed, h.label) for h in hints] == [(nreg, how, indexed, label)]


@pytest.mark.parametrize(
    "question",
    [
        pytest.param("Що каже кодекс про звільнення?", id="generic-word-kodeks"),
        pytest.param("Скільки днів триває щорічна відпустка?", id="topic-word-is-not-the-law-pro-vidpustky"),
        pytest.param("Чи можна звільнити працівника під час лікарняного?", id="plain-question"),
    ],
)
def test_questions_without_act_cues_get_no_act_hints(question: str) -> None:
    assert profile(question).act_hints == []


# --- U2 mode ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "mode", "law_only"),
    [
        pytest.param("Чи можна звільнити працівника під час лікарняного?", "law", True, id="plain-law-question"),
        pytest.param("Чи можна розірвати мій договір оренди достроково?", "mixed", False, id="mentions-my-contract"),
        pytest.param("Що я раніше казав про свою відпустку?", "memory", False, id="refers-to-earlier-talk"),
    ],
)
def test_mode_follows_the_question_cues(question: str, mode: str, law_only: bool) -> None:
    result = profile(question)
    assert (result.mode, result.law_only) == (mode, law_only)


def test_a_plain_question_is_a_law_question_with_its_words_as_keywords() -> None:
    result = profile("Чи можна звільнити працівника під час лікарняного?")
    assert result.act_hints == [] and result.article_refs == []
    assert result.mode == "law" and result.law_only is True
    assert {"звільнити", "працівник"} <= set(result.keywords)


def test_the_words_of_an_asked_term_name_no_act_but_an_act_named_outside_it_counts() -> None:
    # «відпустки …» holds the title words of Закон «Про відпустки»; it is the term asked about, not the act
    inside = profile("Що означає термін «порядок про відпустки працівникам» у законодавстві?")
    assert inside.definition_term == "порядок про відпустки працівникам"
    assert inside.act_hints == []
    outside = profile("Що означає термін «щорічна відпустка» у Законі «Про відпустки»?")
    assert outside.definition_term == "щорічна відпустка"
    assert [c.nreg for c in outside.act_hints] == ["504/96-ВР"]
    assert profile("Скільки днів відпустки за КЗпП?").definition_term is None


def test_an_acts_label_uses_its_conventional_abbreviation() -> None:
    # the catalog lists "КЗПП" and "КЗпП" (sorted, upper case first); citations must read "КЗпП ст. 75"
    lexicon = ActLexicon.build([{"nreg": "322-08", "title": "Кодекс законів про працю України",
                                 "abbreviations": ["КЗПП", "КЗпП"], "aliases": [], "indexed": True}])
    entry = lexicon.get("322-08")
    assert entry is not None and entry.label == "КЗпП"


def test_an_article_named_without_its_act_is_fetched_with_the_words_that_describe_the_act() -> None:
    from pipeline.stages.planning import plan_search

    question = "Що передбачає стаття 4 процесуального кодексу?"
    p = profile(question)
    step = plan_search(question=question, profile=p, top_k=10).steps[0]
    assert (step.kind, step.article, step.act_filter) == ("exact_article", "4", [])
    assert "процесуального кодексу" in step.query
    named = plan_search(question="Що передбачає ст. 36 КЗпП?", profile=profile("Що передбачає ст. 36 КЗпП?"),
                        top_k=10).steps[0]
    assert named.act_filter == ["322-08"] and named.query == "ст. 36"


@pytest.mark.parametrize("question", [
    "Який максимальний строк, якщо в законі не вказано?",
    "Чи передбачено це законом?",
    "Що кажуть закони про це?",
    "У кодексі нічого немає про це?",
])
def test_the_act_word_alone_in_any_case_names_no_act(question: str) -> None:
    # «в законі не вказано» is not an act to look for: as an unresolved phrase it declared a coverage gap «(законі)»
    assert profile(question).unresolved_act_phrases == []


@pytest.mark.parametrize("question", [
    # the words before «закон» say which law the user means, never its name: each declared a gap «(суворішим
    # законом) немає в базі знань» at the head of the answer
    "Мене судитимуть за новим, суворішим законом?",
    "Чи пояснять мені мої права за українським законом?",
    "В інтересах чого законом може бути обмежене право на свободу слова?",
    # a pronoun after «про» ends the name before it starts
    "Який найбільший строк, якщо в законі про цю послугу нічого не сказано?",
    "Що кажуть закони про таку ситуацію?",
    # one of thousands of amending laws, cut to four words: nothing to resolve
    "Яким чином затверджується закон про внесення змін до розділу Конституції?",
])
def test_words_that_only_describe_a_law_name_no_act(question: str) -> None:
    assert profile(question).unresolved_act_phrases == []


def test_an_act_word_with_its_qualifier_is_still_an_unresolved_act() -> None:
    assert profile("Що каже стаття 4 процесуального кодексу?").unresolved_act_phrases == ["процесуального кодексу"]
    assert profile("Що каже Митний кодекс про розмитнення?").unresolved_act_phrases == ["Митний кодекс про розмитнення"]
    assert profile("Що каже закон про захист тварин?").unresolved_act_phrases == ["закон про захист тварин"]
    # a dash ends the name («наші закони про зайнятість — інше» was looked up as «… зайнятість — інше»)
    assert profile("Закон про захист тварин — інше?").unresolved_act_phrases == ["Закон про захист тварин"]


@pytest.mark.parametrize("question", [
    "Що передбачає стаття 71 ЖК України?",
    "Що каже ст. 71 ЖК про тимчасову відсутність?",
    "Чи діє ще ст. 71 жк?",
])
def test_a_codes_two_letters_where_only_a_code_stands_name_its_u_abbreviation(question: str) -> None:
    # «ЖК» is not in the catalog (a housing estate is «ЖК» too): after an article number or before «України» only
    # the code can be meant, and «ст. 71 ЖК України» fetched article 71 of every act
    got = profile(question)
    assert [c.nreg for c in got.act_hints] == ["5464-10"]
    assert [(r.article, r.act_nreg) for r in got.article_refs] == [("71", "5464-10")]


@pytest.mark.parametrize(("question", "nreg"), [
    ("Чи можуть звільнити на лікарняному по КЗпПу?", "322-08"),
    ("Який штраф за КУпАПом за паління в під'їзді?", "80731-10"),
    ("Що каже ЦК про позовну давність?", "435-15"),
])
def test_a_codes_abbreviation_declined_as_a_word_names_the_code(question: str, nreg: str) -> None:
    assert [c.nreg for c in profile(question).act_hints] == [nreg]


@pytest.mark.parametrize("question", ["Мене викликали в ТЦКу", "Працюю в ЦКа"])
def test_a_declined_word_whose_stem_names_no_act_names_none(question: str) -> None:
    # «ЦК» is two letters: only as written; «ТЦК» is no act's abbreviation
    assert profile(question).act_hints == []


def test_a_housing_estate_is_not_the_housing_code() -> None:
    assert profile("Купив квартиру в ЖК «Сонячний», забудовник не здає будинок. Що робити?").act_hints == []


def test_a_title_a_few_words_into_a_laws_name_names_the_law() -> None:
    # «протидію дискримінації» three words after «закон про» was searched as the question's topic only
    assert [c.nreg for c in profile("Що каже закон про запобігання та протидію дискримінації?").act_hints] == [
        "5207-17"]
    # the same words as the question's subject still name no act
    got = profile("Чи є протидія дискримінації на роботі обов'язком роботодавця?")
    assert got.act_hints == [] and [c.nreg for c in got.topic_acts] == ["5207-17"]


def test_a_second_pro_ends_the_name_of_a_law() -> None:
    # «закон про пенсії про страховий стаж» was looked up whole and named an amending law on disability pensions
    assert profile("Що каже закон про захист тварин про безпритульних собак?").unresolved_act_phrases == [
        "закон про захист тварин"]


def test_a_codes_two_letters_written_small_name_nothing_away_from_an_article_number() -> None:
    assert profile("Що таке цк і де його взяти?").act_hints == []
    assert profile("Ст. 5 та ст. 6 про що?").act_hints == []


@pytest.mark.parametrize(("question", "named"), [
    ("Яке державне свято пов'язане з днем прийняття Основного Закону України?", ["254к/96-ВР"]),
    ("Що каже Основний Закон про свободу слова?", ["254к/96-ВР"]),
    ("Чи гарантує основний закон країни право на житло?", ["254к/96-ВР"]),
    ("Це основний закон про освіту?", []),  # the main law on a subject
    ("Щорічна основна відпустка — скільки днів?", []),
])
def test_the_basic_law_is_the_constitution(question: str, named: list[str]) -> None:
    assert [c.nreg for c in profile(question).act_hints] == named


@pytest.mark.parametrize(("question", "named", "topic"), [
    pytest.param("Мене звільнили під час воєнного стану. Це законно?", [], ["389-19"], id="circumstance"),
    pytest.param("Чи треба платити судовий збір за позов про аліменти?", [], ["3674-17"], id="unindexed-subject"),
    pytest.param("Що каже закон про правовий режим воєнного стану про комендантську годину?", ["389-19"], [],
                 id="law-named"),
    pytest.param("Скільки днів відпустки за законом про відпустки?", ["504/96-ВР"], [], id="pro-title"),
    pytest.param("Чи можна за Цивільним кодексом повернути товар?", ["435-15"], [], id="code-title"),
    pytest.param("Який штраф за КУпАП?", ["80731-10"], [], id="abbreviation"),
])
def test_an_acts_title_words_name_it_only_when_the_question_says_they_are_an_act(
        question: str, named: list[str], topic: list[str]) -> None:
    result = profile(question)
    assert [c.nreg for c in result.act_hints] == named
    assert [c.nreg for c in result.topic_acts] == topic


def test_a_subject_act_is_searched_beside_the_question_not_instead_of_it() -> None:
    from pipeline.stages.planning import TOPIC_ACT_WEIGHT, plan_search

    question = "Мене звільнили під час воєнного стану. Це законно?"
    steps = plan_search(question=question, profile=profile(question), top_k=10).steps
    assert steps[0].act_filter == [] and steps[0].weight == 1
    assert [(s.act_filter, s.weight) for s in steps if "389-19" in s.act_filter] == [(["389-19"], TOPIC_ACT_WEIGHT)]
    # a subject act the base does not index is no coverage gap: the gate never sees it as named
    unindexed = profile("Чи треба платити судовий збір за позов про аліменти?")
    assert unindexed.act_hints == [] and all("3674-17" not in s.act_filter
                                              for s in plan_search(question="q", profile=unindexed, top_k=10).steps)


def test_intake_reads_latin_look_alikes_in_ukrainian_words_as_cyrillic() -> None:
    # a keyboard without «і» puts the Latin «i» in: the stages after U1 see the Ukrainian words
    section = take("Чи можуть звiльнити мене пiд час лiкарняного?")
    assert section.normalized == "Чи можуть звільнити мене під час лікарняного?"
    assert section.question == "Чи можуть звiльнити мене пiд час лiкарняного?"  # what the user typed is kept


def test_intake_mends_a_slip_every_later_stage_reads() -> None:
    # the lexical search mended «поясненя» by itself; the model that embeds the question, the writer and a real
    # model's prompt read U1's text
    section = take("Мене звільнили без поясненя причин, а чиновнік не відповідає.")
    assert section.normalized == "Мене звільнили без пояснення причин, а чиновник не відповідає."
    assert section.question == "Мене звільнили без поясненя причин, а чиновнік не відповідає."


def test_intake_reads_the_question_without_the_greeting_and_the_thanks_around_it() -> None:
    section = take("Доброго дня! Підкажіть, будь ласка, чи можуть звільнити на лікарняному? Заздалегідь дякую!")
    assert section.normalized == "Чи можуть звільнити на лікарняному?"


def test_intake_reads_a_russian_word_in_ukrainian_not_as_a_slip() -> None:
    section = take("Скільки днів отпуска положено по закону?")
    assert section.normalized == "Скільки днів відпустки належить по закону?"


def test_intake_reads_a_question_typed_without_a_capital_or_its_mark_as_one() -> None:
    section = take("чи можуть звільнити мене на лікарняному")
    assert section.normalized == "Чи можуть звільнити мене на лікарняному?"
    assert section.question == "чи можуть звільнити мене на лікарняному"


@pytest.mark.parametrize("question", [
    "Що каже Конституція про право на працю?",
    "Чи обов'язково служити в армії за Конституцією?",
    "Чи можна йти до суду, посилаючись просто на Конституцію?",
    "Де в Конституції написано про право на житло?",
])
def test_the_constitution_is_named_in_any_case(question: str) -> None:
    assert [(c.nreg, c.how) for c in profile(question).act_hints] == [("254к/96-ВР", "abbreviation")]


@pytest.mark.parametrize("question", ["Що може Конституційний Суд?", "Що вивчає конституційне право?"])
def test_a_word_of_the_constitutions_family_names_no_act(question: str) -> None:
    assert profile(question).act_hints == []


@pytest.mark.parametrize("question", ["Що каже закон про мобілізацію про відстрочку?",
                                      "Прийшла повістка про мобілізацію. Що робити?"])
def test_an_alias_of_one_word_after_pro_names_its_act(question: str) -> None:
    assert [c.nreg for c in profile(question).act_hints] == ["3543-12"]


def test_a_one_word_alias_without_pro_names_nothing() -> None:
    lexicon = ActLexicon.build([{"nreg": "1", "title": "Про щось", "abbreviations": [], "aliases": ["мобілізація"],
                                 "indexed": True}])
    assert lexicon.entries[0].name_forms == (("про", "щось"),)


def _shipped_catalog() -> ActLexicon:
    """The shipped act catalog with its aliases, as the knowledge base loads it (no database needed)."""
    import gzip
    import json
    from pathlib import Path

    corpus = Path(__file__).resolve().parents[2] / "knowledge" / "corpus"
    aliases: dict[str, list[str]] = {}
    with gzip.open(corpus / "act_aliases.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            aliases.setdefault(row["nreg"], []).append(row["alias"])
    with gzip.open(corpus / "acts_catalog.jsonl.gz", "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    return ActLexicon.build([{**r, "aliases": aliases.get(r["nreg"], []), "indexed": r.get("in_core_articles")}
                             for r in rows])


def test_the_cue_index_finds_the_acts_a_scan_of_the_whole_catalog_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """U2 reads only the catalog entries a question's words can name; every act a scan of all ~10,000 entries finds
    (by abbreviation, whole-word abbreviation, title or «про …» form), in the same order, it finds too."""
    import json
    from pathlib import Path

    from legaltext.references import article_mentions
    from pipeline.stages import profiling

    lexicon = _shipped_catalog()
    root = Path(__file__).resolve().parents[2]
    questions = [json.loads(line)["question"] for line in (root / "eval" / "natural" / "dev.jsonl").open()][:120]
    questions += ["Що каже ст. 6 Закону про відпустки?", "за Конституцією", "КЗпП і ЦК", "закон про звернення громадян",
                  "Кодексу України про адміністративні правопорушення ст. 130", "ЦПК ст. 28", "КУ ст. 44"]
    indexed = [profiling._act_cues(q, lexicon, article_mentions(q)) for q in questions]
    every = range(len(lexicon.entries))
    monkeypatch.setattr(profiling._CueIndex, "abbreviated", lambda self, tokens: list(every))
    monkeypatch.setattr(profiling._CueIndex, "named", lambda self, words: list(every))
    scanned = [profiling._act_cues(q, lexicon, article_mentions(q)) for q in questions]
    assert indexed == scanned
    assert sum(bool(found) for found in scanned) >= 10  # the questions do name acts


def test_a_question_naming_hundreds_of_articles_plans_a_bounded_number_of_searches() -> None:
    from pipeline.stages.profiling import ARTICLE_REFS_MAX

    question = " ".join(f"ст.{n}" for n in range(1, 500)) + " ст.1 КЗпП"
    refs = profile(question).article_refs
    assert [r.article for r in refs] == [str(n) for n in range(1, ARTICLE_REFS_MAX + 1)]
    twice = profile("ст. 40 КЗпП і ще раз ст. 40 КЗпП").article_refs
    assert [r.article for r in twice] == ["40"]


# Laws the base does not hold, whose titles open with everyday words: naming them declares a coverage gap
OUTSIDE = ActLexicon.build([
    {"nreg": "2657-12", "title": "Про інформацію", "abbreviations": [], "aliases": [], "indexed": False},
    {"nreg": "2222-15", "title": "Про внесення змін до Конституції України", "abbreviations": [], "aliases": [],
     "indexed": False},
    {"nreg": "254к/96-ВР", "title": "Конституція України", "abbreviations": ["КОНСТИТУЦІЯ"], "aliases": [],
     "indexed": True},
])


@pytest.mark.parametrize(("question", "named"), [
    pytest.param("Чи відповідають чиновники на запити про інформацію вчасно?", [], id="everyday-words"),
    pytest.param("Що каже закон про інформацію про відкриті дані?", ["2657-12"], id="after-zakon"),
    pytest.param("Що сказано в «Про інформацію» щодо відкритих даних?", ["2657-12"], id="quoted"),
    pytest.param("Що сказано в Про інформацію щодо відкритих даних?", ["2657-12"], id="written-as-a-title"),
    # a bill is not an act, and an amending law's title words name one of thousands
    pytest.param("Як Рада розглядає законопроект про внесення змін до Конституції України?", ["254к/96-ВР"],
                 id="bill"),
])
def test_a_title_the_base_lacks_is_named_only_when_the_question_says_it_is_an_act(question: str,
                                                                                    named: list[str]) -> None:
    assert [c.nreg for c in profile_query(take(question), OUTSIDE).act_hints] == named
