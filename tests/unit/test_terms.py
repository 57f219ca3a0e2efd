"""Defined terms: extraction from the forms Ukrainian acts use, and matching a question's term against them."""

from __future__ import annotations

from legaltext.definitions import clean_term, definition_term, extract_terms, match_score, rank_definitions, term_key
from pipeline.contracts import QueryProfile
from pipeline.stages.planning import plan_search

DEFINITIONS = """1. У цьому Законі наведені нижче терміни вживаються в такому значенні:
1) абонент - споживач, який отримує електронні комунікаційні послуги;
4 -1 ) дізнавач - службова особа підрозділу дізнання;
7) допінг-проба (далі - проба) - будь-який біологічний матеріал, взятий з метою проведення допінг-контролю;
9) держава-агресор (держава-окупант) - Російська Федерація;
10) термін "інформаційно-комунікаційна система" - у значенні, наведеному в Законі України;
11) для працівників віком від 16 до 18 років - 36 годин на тиждень;
12) відповідальні зберігачі – суб’єкти господарювання незалежно від форми власності.
2. Інші терміни вживаються у значенні, наведеному в законах."""


def terms_of(text: str, heading: str | None = "Визначення термінів") -> dict[str, str]:
    return {t.key: t.term for t in extract_terms(text, heading)}


def test_list_items_give_their_terms_keyed_by_lemmas() -> None:
    terms = terms_of(DEFINITIONS)
    assert terms[term_key("абонент")] == "абонент"
    assert terms[term_key("дізнавач")] == "дізнавач"  # a flattened superscript number "4 -1 )"
    assert term_key("відповідальний зберігач") in terms  # plural in the act, any form in the question
    assert "інформаційно-комунікаційна система" in terms.values()  # the word "термін" and quotes dropped


def test_an_alias_and_a_gloss_are_terms_of_their_own() -> None:
    terms = set(terms_of(DEFINITIONS).values())
    assert {"допінг-проба", "проба"} <= terms  # "(далі - проба)": its dash does not end the term
    assert {"держава-агресор (держава-окупант)", "держава-агресор", "держава-окупант"} <= terms


def test_list_items_that_are_not_terms_are_left_out() -> None:
    terms = set(terms_of(DEFINITIONS).values())
    assert not any(t.startswith("для ") for t in terms)  # a rate table item, not a term
    assert not any("Інші терміни" in t for t in terms)


def test_items_without_numbers_count_only_where_the_act_announces_definitions() -> None:
    plain = "захищений шлюз з’єднання - комплекс технічних засобів\nкриптографічний захист - перетворення"
    assert terms_of(plain, heading="Текст документа") == {}
    announced = "Терміни вживаються в такому значенні:\n" + plain
    # apostrophes are normalised as everywhere in the index (’ → ')
    assert set(terms_of(announced, heading="Текст документа").values()) == {"захищений шлюз з'єднання",
                                                                              "криптографічний захист"}
    assert all(t.announced for t in extract_terms(announced, "Текст документа"))


def test_a_question_term_is_cleaned_as_the_act_term_is() -> None:
    assert clean_term('термін "інформаційно-комунікаційна система') == "інформаційно-комунікаційна система"
    assert clean_term("допінг-проба (далі") == "допінг-проба"
    assert clean_term("оптовий ринок певних послуг (оптовий ринок") == "оптовий ринок певних послуг"


def test_match_is_exact_for_any_form_and_partial_by_word_overlap() -> None:
    assert match_score(term_key("відповідальні зберігачі"), term_key("відповідальний зберігач")) == 1.0
    assert 0.6 < match_score(term_key("викуп цінних паперів"), term_key("викуп цінних паперів емітентом")) < 1
    assert match_score(term_key("папери"), term_key("викуп цінних паперів")) < 0.6


def test_definitions_rank_the_same_term_first_and_announced_articles_before_others() -> None:
    def point(chunk: str, term: str, announced: bool, heading: str = "Інше") -> dict[str, object]:
        return {"chunk_key": chunk, "term_key": term_key(term), "announced": announced, "heading": heading}

    ranked = rank_definitions(term_key("установка"), [
        point("a#st5#c0", "установка зберігання", True),
        point("b#st9#c0", "установка", False),
        point("c#st1#c0", "установка", True, "Визначення термінів"),
        point("d#st2#c0", "папір", True),
    ], limit=10)
    assert [(p["chunk_key"], s) for p, s in ranked] == [("c#st1#c0", 1.0), ("b#st9#c0", 1.0),
                                                         ("a#st5#c0", 2 / 3)]


def test_a_definition_question_plans_the_term_lookup_first() -> None:
    question = "Що означає термін «дізнавач» у законодавстві?"
    assert definition_term(question) == "дізнавач"
    plan = plan_search(question=question, profile=QueryProfile(mode="law", law_only=True, goals=[question],
                                                              keywords=[], complexity="simple",
                                                              definition_term="дізнавач"), top_k=10)
    assert [s.kind for s in plan.steps][:2] == ["definition", "hybrid"]
    assert plan.steps[0].query == "дізнавач"


def test_unquoted_terms_are_recognised_but_not_situations() -> None:
    assert definition_term("Що таке спадщина?") == "спадщина"
    assert definition_term("Що означає поворот виконання рішення за ЦПК?") == "поворот виконання рішення"
    assert definition_term("Що означає для працівника звільнення за статтею 40?") is None
    # a second question joined on ends the term
    assert definition_term("Що таке колективний договір і де він укладається?") == "колективний договір"
    assert definition_term("Що таке аванс, і коли його платять?") == "аванс"
    assert definition_term("Скільки днів триває відпустка?") is None


def test_a_short_follow_up_is_searched_with_the_previous_question() -> None:
    def plan_for(question: str, previous: str | None, **profile: object) -> list[str]:
        p = QueryProfile(mode="law", law_only=True, goals=[question], keywords=[], complexity="simple",
                         **profile)
        return [s.query for s in plan_search(question=question, profile=p, top_k=10,
                                             previous_question=previous).steps if s.weight == 1]

    first = "Скільки днів щорічної відпустки має працівник?"
    assert plan_for("А для неповнолітніх?", first) == [f"{first} А для неповнолітніх?", "А для неповнолітніх?"]
    assert plan_for("А для неповнолітніх?", None) == ["А для неповнолітніх?"]
    long_question = "Чи може роботодавець звільнити працівника під час лікарняного без згоди профспілки?"
    assert plan_for(long_question, first) == [long_question]  # a full question stands on its own
    assert plan_for("Що таке мобінг?", first, definition_term="мобінг")[0] == "мобінг"


def test_copies_of_one_text_are_folded_into_the_principal_act() -> None:
    from pipeline.stages.retrieval import ChunkPayload, fuse

    def payload(nreg: str, title: str, sig: str | None, article: str = "129") -> ChunkPayload:
        return {"chunk_key": f"{nreg}#st{article}#c0", "act_nreg": nreg, "article": article, "act_title": title,
                "text_sig": sig}

    amending = payload("2147-19", "Закон України (2147-19)", "s1")
    code = payload("1618-15", "Цивільний процесуальний кодекс України", "s1")
    other = payload("435-15", "Цивільний кодекс України", "s2", "3")
    stub_a = payload("1-99", "Про одне", None, "5")
    stub_b = payload("2-99", "Про інше", None, "5")
    # the amending act's copy ranks first, the code's copy third: one entry, at the first rank, showing the code
    fused = fuse([], [(amending, 3.0), (other, 2.0), (code, 1.0), (stub_a, 0.5), (stub_b, 0.4)], 10)
    assert [(ps[0]["act_nreg"], ps[0]["article"]) for ps, *_ in fused] == [
        ("1618-15", "129"), ("435-15", "3"), ("1-99", "5"), ("2-99", "5")]  # unsigned stubs stay apart
    assert [ps[0]["act_nreg"] for ps, *_ in fuse([], [(amending, 3.0), (other, 2.0), (code, 1.0)], 2)] == [
        "1618-15", "435-15"]


def test_the_codes_copular_definitions_are_terms_too() -> None:
    text = ("1. Трудовим договором є угода між працівником і роботодавцем.\n"
            "2. Метою цього Закону є захист прав працівників.\n"
            "Не є порушенням відмова від угоди. Позовною давністю є строк, у межах якого особа може звернутися.")
    assert set(terms_of(text, heading="Трудовий договір")) == {term_key("трудовий договір"),
                                                               term_key("позовна давність")}


def test_a_deeming_provision_defines_nothing() -> None:
    """«Правочин вважається таким, що вчинений у письмовій формі, якщо …» says when, not what: the answer to «Що
    таке правочин?» led with it instead of ЦК ст. 202's «Правочином є дія особи …»."""
    text = ("Правочин вважається таким, що вчинений у письмовій формі, якщо воля сторін виражена письмово.\n"
            "Особа вважається такою, що не має судимості.\nПравочином є дія особи, спрямована на набуття прав.")
    assert [t.key for t in extract_terms(text)] == [term_key("правочин")]
    assert extract_terms(text)[0].term == "Правочином"


def test_who_is_asks_for_a_definition_too() -> None:
    assert definition_term("Хто такий споживач?") == "споживач"
    assert definition_term("Хто такі близькі родичі?") == "близькі родичі"
    assert definition_term("Хто має право на пенсію?") is None


def test_a_defined_term_lacking_a_word_of_the_asked_one_is_another_term() -> None:
    assert match_score(term_key("колективний договір"), term_key("договір")) == 0.0
    assert rank_definitions(term_key("колективний договір"),
                            [{"chunk_key": "a#st1#c0", "term_key": term_key("договір")}], limit=5) == []


def test_the_first_lexical_article_carries_its_lead_over_the_next_article_and_no_other_does() -> None:
    from pipeline.stages.retrieval import ChunkPayload, fuse

    def chunk(article: str, ordinal: int = 0) -> ChunkPayload:
        return {"chunk_key": f"322-08#st{article}#c{ordinal}", "act_nreg": "322-08", "article": article,
                "act_title": "Кодекс законів про працю України"}

    # the first article's two chunks lead the list: the lead is measured against the next *article* (2.0)
    fused = fuse([(chunk("40"), 0.9)], [(chunk("40"), 4.0), (chunk("40", 1), 3.5), (chunk("47"), 2.0)], 10)
    leads = {ps[0]["article"]: ranks.lexical_lead for ps, _, _, ranks in fused}
    assert leads == {"40": 0.5, "47": None}
    # a near tie leads by a hair; a list of one article has no runner-up to lead
    near = fuse([], [(chunk("40"), 4.0), (chunk("47"), 3.9)], 10)
    assert near[0][3].lexical_lead == 0.025
    assert fuse([], [(chunk("40"), 4.0)], 10)[0][3].lexical_lead is None


def test_the_constitution_has_seats_beside_the_main_search_unless_the_question_points_elsewhere() -> None:
    from pipeline.contracts import ActCue, ArticleRefCue
    from pipeline.stages.planning import CONSTITUTION_NREG, CONSTITUTION_SEAT_WEIGHT, CONSTITUTION_SEATS

    def seats(question: str, **profile: object) -> list[tuple[str, list[str], int, float]]:
        p = QueryProfile(mode="law", law_only=True, goals=[question], keywords=[], complexity="simple", **profile)
        return [(s.query, s.act_filter, s.limit, s.weight)
                for s in plan_search(question=question, profile=p, top_k=10).steps if s.weight < 1]

    lay = "Держава хоче забрати мою ділянку під дорогу. Чи можуть без компенсації?"
    assert seats(lay) == [(lay, [CONSTITUTION_NREG], CONSTITUTION_SEATS, CONSTITUTION_SEAT_WEIGHT)]
    assert seats("Що таке мобінг?", definition_term="мобінг") == []  # a term is defined where it is defined
    ref = ArticleRefCue(article="36", matched="статті 36")
    assert seats("Що каже стаття 36?", article_refs=[ref]) == []  # a named article is fetched, not searched
    # an act the question names is searched, not the Constitution beside it (the unfiltered guard runs at full weight)
    named = "Відповідно до Кодексу адміністративного судочинства, у який строк розглядається заява?"
    cas = ActCue(nreg="2747-15", title="Кодекс адміністративного судочинства України", label="КАС",
                 matched="кодекс адміні судочи", how="title", indexed=True)
    assert seats(named, act_hints=[cas]) == []
    assert [s.act_filter for s in plan_search(question=named, profile=QueryProfile(
        mode="law", law_only=True, goals=[named], keywords=[], complexity="simple", act_hints=[cas]),
        top_k=10).steps] == [["2747-15"], []]
