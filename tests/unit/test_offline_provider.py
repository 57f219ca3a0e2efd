"""The offline provider (llm/providers/offline.py): deterministic, extractive, cites only what it was given."""

from __future__ import annotations

import re

import pytest

from assemble.prompt import SourceBlock, legacy_messages
from legaltext.citations import find_citations
from llm.providers.offline import MODEL, OfflineProvider, compose_answer
from llm.tokenizer import count_tokens
from pipeline.contracts import CoverageGap, SpecialistProfile
from pipeline.messages import Message

SPECIALIST = SpecialistProfile(slug="demo", soul="Ти — уважний юрист з трудового права.")
LABELS = {"КЗпП": "322-08", "Закон «Про відпустки»": "504/96-ВР", "ПКУ": "2755-17"}
BLOCKS = [
    SourceBlock("КЗпП ст. 75", "k75", "Тривалість щорічної основної відпустки",
                "Щорічна основна відпустка надається працівникам тривалістю не менш як 24 календарних дні за "
                "відпрацьований робочий рік. Особам віком до вісімнадцяти років надається щорічна основна "
                "відпустка тривалістю 31 календарний день."),
    SourceBlock("Закон «Про відпустки» ст. 6", "k6", None,
                "Щорічна основна відпустка надається працівникам тривалістю не менш як 24 календарних дні. "
                "Працівник має право поділити щорічну відпустку на частини."),
]
QUESTION = "Скільки днів триває щорічна основна відпустка?"
GAP = CoverageGap(reason="ACT_FOUND_IN_CATALOG_NOT_INDEXED",
                  acts=[{"nreg": "2755-17", "title": "Податковий кодекс України"}])
QUOTE = re.compile(r"^(?:Коротко: |— )(?P<quote>.+) \((?P<ref>[^()]+)\)\.$", re.M)


def messages(blocks: list[SourceBlock] = BLOCKS, question: str = QUESTION,
             gap: CoverageGap | None = None) -> list[Message]:
    return legacy_messages(profile=SPECIALIST, blocks=blocks, question=question, coverage_gap=gap)


def test_every_quote_comes_from_the_source_it_cites() -> None:
    # when
    answer = compose_answer(messages())
    # then
    bodies = {b.article_ref: f"{b.heading or ''}\n{b.text}" for b in BLOCKS}
    quotes = list(QUOTE.finditer(answer))
    assert quotes, answer
    for q in quotes:
        assert q["ref"] in bodies, q["ref"]
        assert q["quote"].removesuffix(" …") in bodies[q["ref"]]


def test_it_cites_each_source_it_uses_in_canonical_form_and_nothing_else() -> None:
    # given a question that itself names an article the sources do not contain (of an act none of them is from)
    answer = compose_answer(messages(question="Чи змінює ПКУ ст. 36 тривалість щорічної основної відпустки?"))
    # when
    cited = {c.article_ref for c in find_citations(answer, LABELS)}
    # then
    assert cited == {b.article_ref for b in BLOCKS}
    assert all(c.act_nreg is not None for c in find_citations(answer, LABELS))
    assert "ПКУ ст. 36" not in answer
    assert answer.rstrip().endswith("Підстави: КЗпП ст. 75; Закон «Про відпустки» ст. 6.")


def test_a_question_naming_one_of_the_acts_is_answered_from_it() -> None:
    # given a question that names the Labour Code, whose article is in the evidence beside the leave law's
    answer = compose_answer(messages(question="Чи змінює КЗпП ст. 36 тривалість щорічної основної відпустки?"))
    # then the leave law's near-copy of its sentence is no longer a detail, and the named ст. 36 is not cited
    assert {c.article_ref for c in find_citations(answer, LABELS)} == {"КЗпП ст. 75"}
    assert "КЗпП ст. 36" not in answer


def test_without_sources_it_says_no_norms_were_found_and_cites_nothing() -> None:
    answer = compose_answer(messages(blocks=[]))
    assert "не знайдено норм" in answer
    assert find_citations(answer, LABELS) == []


def test_a_coverage_gap_makes_it_say_the_act_is_missing() -> None:
    # when
    answer = compose_answer(messages(blocks=BLOCKS[:1], question="Яка ставка податку на доходи?", gap=GAP))
    # then
    assert "Податковий кодекс України" in answer
    assert "немає в базі знань" in answer
    assert {c.article_ref for c in find_citations(answer, LABELS)} == {"КЗпП ст. 75"}


def test_a_coverage_gap_without_sources_still_says_both() -> None:
    answer = compose_answer(messages(blocks=[], gap=GAP))
    assert "Податковий кодекс України" in answer and "не знайдено норм" in answer


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4"])
def test_complete_is_deterministic_and_reports_exact_token_counts(model: str) -> None:
    # given
    provider, msgs = OfflineProvider(), messages()
    # when
    first = provider.complete(model=model, messages=msgs, max_tokens=900)
    second = provider.complete(model=model, messages=msgs, max_tokens=900)
    # then
    assert first == second
    assert first.text == compose_answer(msgs)
    assert first.prompt_tokens == sum(count_tokens(m.content, model) for m in msgs)
    assert first.completion_tokens == count_tokens(first.text, model)
    assert (first.model, first.usage_reported) == (MODEL, False)


def test_complete_never_exceeds_max_tokens() -> None:
    # given a budget smaller than the full answer
    msgs = messages()
    full = count_tokens(compose_answer(msgs))
    # when
    out = OfflineProvider().complete(model="gpt-4o-mini", messages=msgs, max_tokens=20)
    # then
    assert full > 20
    assert out.completion_tokens == 20 == count_tokens(out.text)
    assert compose_answer(msgs).startswith(out.text)


def test_a_definition_question_is_answered_with_the_item_that_defines_the_term() -> None:
    # given the opening of a definitions article: every item shares "термін" with the question
    definitions = SourceBlock(
        "Закон «Про акциз» ст. 1", "d1", "Визначення термінів",
        "1. Для цілей цього Закону наведені нижче терміни вживаються в такому значенні:\n"
        "1) акцизний електронний документ - електронний документ, що складається економічним оператором;\n"
        "2) деалкоголізація - процес видалення етилового спирту з вина;\n"
        "3) економічний оператор - особа, що провадить діяльність з обігу товарів.")
    answer = compose_answer(messages(blocks=[definitions],
                                     question="Що означає термін «деалкоголізація» у законодавстві?"))
    lead = answer.split("\n")[0]
    assert lead == "Коротко: 2) деалкоголізація - процес видалення етилового спирту з вина (Закон «Про акциз» ст. 1)."
    assert "— Визначення термінів (" not in answer  # the article's heading is a title, not a statement to quote


def test_a_lay_phrase_counts_only_where_the_statutes_whole_phrase_stands() -> None:
    # given «на лікарняному», which the statute calls «тимчасова непрацездатність», and sentences holding the whole
    # phrase, one word of it, or nothing of it
    from llm.providers.offline import _Scorer

    sentences = ["Не допускається звільнення працівника в період його тимчасової непрацездатності.",
                 "Особа зобов'язана передати тимчасово вилучене майно слідчому.",
                 "Слідчий складає протокол затримання."]
    scorer = _Scorer("Чи можуть мене звільнити, поки я на лікарняному?", sentences)
    whole, one_word, nothing = (scorer.score(i, s) for i, s in enumerate(sentences))
    # then only the whole phrase counts: «тимчасово вилучене майно» shares a word, not a meaning
    assert whole > 0 and one_word == 0 and nothing == 0


# the noun: the thesaurus reads «звільнити» as the employer's initiative, which the notice does not hold whole
SICK_LEAVE = "Чи може роботодавець оформити моє звільнення, поки я на лікарняному?"
NOTICE = ("Роботодавець не вправі звільнити працівника за поданою раніше заявою, якщо працівник не вимагає "
          "розірвання трудового договору.")
PROHIBITION = ("Не допускається звільнення працівника з ініціативи роботодавця в період його тимчасової "
               "непрацездатності.")


@pytest.mark.parametrize("once", [1, 0])
def test_a_lay_phrase_and_the_statutes_words_for_it_count_once(monkeypatch: pytest.MonkeyPatch, once: int) -> None:
    from llm.providers import offline

    # given a question of two ideas, «звільнення» (the statute also says «розірвання трудового договору») and «на
    # лікарняному» («тимчасова непрацездатність»): one sentence says the first idea both ways, one says both ideas
    monkeypatch.setattr(offline, "LAY_PHRASE_ONCE", once)
    scorer = offline._Scorer(SICK_LEAVE, [NOTICE, PROHIBITION])
    notice, prohibition = scorer.score(0, NOTICE), scorer.score(1, PROHIBITION)
    # then the sentence holding both ideas weighs more; summing every word of both wordings of one idea (the old
    # scorer) put the other first
    assert (prohibition > notice) is bool(once), (notice, prohibition)


WARTIME_RULE = SourceBlock("КЗпП ст. 40", "k40", "Підстави розірвання трудового договору з ініціативи роботодавця",
                           PROHIBITION)
WARTIME_EXCEPTION = SourceBlock(
    "Закон «Про організацію трудових відносин в умовах воєнного стану» ст. 5", "w5", None,
    "У період дії воєнного стану допускається звільнення працівника з ініціативи роботодавця в період його "
    "тимчасової непрацездатності.")


@pytest.mark.parametrize(("question", "lead"), [
    (SICK_LEAVE, "КЗпП ст. 40"),
    ("Чи може роботодавець під час війни звільнити мене, поки я на лікарняному?",
     "Закон «Про організацію трудових відносин в умовах воєнного стану» ст. 5"),
])
def test_the_codes_rule_leads_and_its_wartime_exception_follows_unless_the_war_is_asked(
        monkeypatch: pytest.MonkeyPatch, question: str, lead: str) -> None:
    from llm.providers import offline

    # given the wartime exception first in the evidence and the code's rule, in the same words, second (the words
    # alone choose here: two sentences' meaning would be 1 and 0, whatever they say)
    monkeypatch.setattr(offline, "_similarity", None)
    answer = compose_answer(messages(blocks=[WARTIME_EXCEPTION, WARTIME_RULE], question=question))
    # then the rule leads unless the question speaks of the war; the other is quoted as a detail either way
    first, *details = QUOTE.findall(answer)
    assert first[1] == lead, answer
    assert len(details) == 1, answer


PREGNANCY = SourceBlock(
    "КЗпП ст. 184", "k184", "Гарантії при прийнятті на роботу і заборона звільнення вагітних жінок",
    "Звільнення вагітних жінок і жінок, які мають дітей віком до трьох років (до шести років - частина шоста "
    "статті 179 ), з ініціативи роботодавця не допускається. "
    "Відповідно до статті 179 цього Кодексу, роботодавець надає відпустку.")


@pytest.mark.parametrize("cut", [1, 0])
def test_a_pointer_to_an_article_outside_the_evidence_is_left_out_of_the_quote(monkeypatch: pytest.MonkeyPatch,
                                                                               cut: int) -> None:
    from llm.providers import offline

    # given the sentence that answers, with an aside pointing to КЗпП ст. 179, which is not in the evidence
    monkeypatch.setattr(offline, "FOREIGN_POINTER_CUT", cut)
    answer = compose_answer(messages(blocks=[PREGNANCY], question="Чи можуть звільнити вагітну жінку?"))
    # then the sentence is quoted with the aside cut to «…», and ст. 179 is cited nowhere; a sentence with too little
    # left after the cut is not quoted (before, neither sentence could be quoted at all)
    if cut:
        assert answer.split("\n")[0] == (
            "Коротко: Звільнення вагітних жінок і жінок, які мають дітей віком до трьох років …, з ініціативи "
            "роботодавця не допускається (КЗпП ст. 184).")
    else:
        assert "Звільнення вагітних жінок" not in answer
    assert "179" not in answer and "надає відпустку" not in answer

MOBILISATION = SourceBlock(
    "Закон «Про мобілізацію» ст. 23", "m23", "Відстрочка від призову на військову службу під час мобілізації",
    "1. Не підлягають призову на військову службу під час мобілізації військовозобов'язані:\n"
    "1) заброньовані на період мобілізації та на воєнний час за органами державної влади;\n"
    "11) які мають дружину (чоловіка) з числа осіб з інвалідністю I чи II групи;\n"
    "12) які мають одного з батьків з інвалідністю I чи II групи.\n"
    "2. Громадяни подають документи до територіального центру комплектування.")


def test_a_list_item_is_quoted_after_the_words_it_continues() -> None:
    # given a question answered by one item of a statute's list
    answer = compose_answer(messages(blocks=[MOBILISATION],
                                     question="Дружина має другу групу інвалідності. Чи можуть мене мобілізувати?"))
    lead = answer.split("\n")[0]
    # then the item is not quoted alone («11) які мають дружину …» answers nothing): its list's opening leads it
    assert lead == ("Коротко: Не підлягають призову на військову службу під час мобілізації військовозобов'язані: "
                    "11) які мають дружину (чоловіка) з числа осіб з інвалідністю I чи II групи "
                    "(Закон «Про мобілізацію» ст. 23).")


def test_an_item_whose_number_carries_a_flattened_superscript_is_quoted_after_its_list_opening() -> None:
    # given an item numbered «1 -1 )» (the source flattens the superscript of 1¹ with spaces)
    block = SourceBlock("КЗпП ст. 232", "k232", "Трудові спори, що підлягають безпосередньому розглядові у судах",
                        "Безпосередньо в районних, міських чи міськрайонних судах розглядаються трудові спори за "
                        "заявами:\n1) працівників підприємств про поновлення на роботі;\n"
                        "1 -1 ) домашніх працівників;\n2) керівника підприємства про звільнення.")
    answer = compose_answer(messages(blocks=[block], question="Я домашня працівниця. Куди подавати трудовий спір?"))
    # then the item leads with the words it continues, never alone as «1 -1 ) домашніх працівників»
    assert answer.split("\n")[0].startswith("Коротко: Безпосередньо в районних, міських чи міськрайонних судах "
                                             "розглядаються трудові спори за заявами: 1 -1 ) домашніх працівників")


def test_an_item_with_a_dash_of_a_list_that_defines_nothing_keeps_its_opening() -> None:
    # given the Constitution's list of the principles of justice, one item of which holds a dash
    block = SourceBlock("КУ ст. 129", "k129", None,
                        "Основними засадами судочинства є:\n1) рівність усіх учасників судового процесу перед законом "
                        "і судом;\n8) забезпечення права на апеляційний перегляд справи та у визначених законом "
                        "випадках - на касаційне оскарження судового рішення;\n9) обов’язковість судового рішення.")
    answer = compose_answer(messages(blocks=[block], question="Чи можна оскаржити рішення суду в апеляції?"))
    # then the item is not read as a defined term: it leads with the words it continues
    assert answer.split("\n")[0] == ("Коротко: Основними засадами судочинства є: 8) забезпечення права на апеляційний "
                                      "перегляд справи та у визначених законом випадках - на касаційне оскарження "
                                      "судового рішення (КУ ст. 129).")


def test_a_defined_terms_item_from_the_middle_of_a_glossary_is_no_continuation() -> None:
    # given a chunk of a glossary article that starts inside its list (the opening is in the chunk before)
    block = SourceBlock("Закон «Про запобігання корупції» ст. 1", "k1", "Визначення термінів",
                        "близькі особи - члени сім’ї суб’єкта декларування, а також чоловік, дружина, батько, мати;\n"
                        "державний орган - орган державної влади, в тому числі колегіальний державний орган.")
    answer = compose_answer(messages(blocks=[block], question="Що означає термін «близькі особи»?"))
    # then the item is quoted as it stands, not after «…» as if it continued a sentence the answer does not show
    assert answer.split("\n")[0].startswith("Коротко: близькі особи - члени сім’ї суб’єкта декларування")


def test_a_sentence_after_the_list_and_an_opening_naming_another_article_are_quoted_alone() -> None:
    from llm.providers.offline import _with_headers

    sentences = ["Працівники мають право:", "1) на відпустку;", "2) на оплату праці.", "інші права визначає закон."]
    assert [h for _, h in _with_headers(sentences)] == [None, "Працівники мають право:", "Працівники мають право:",
                                                         None]
    # a list opened inside a sentence, as snippets often carry it on one line
    inline = ["До службовців застосовується один із таких видів стягнення: 1) зауваження;", "2) догана;",
              "4) звільнення з посади державної служби.", "Інше речення після переліку."]
    assert [h for _, h in _with_headers(inline)] == [
        None, "До службовців застосовується один із таких видів стягнення:",
        "До службовців застосовується один із таких видів стягнення:", None]
    # an opening that points at an article outside the sources is not quotable, so the item goes alone
    block = SourceBlock("КЗпП ст. 75", "k75", None,
                        "Відповідно до статті 12 Закону України «Про відпустки» відпустка надається:\n"
                        "1) тривалістю не менш як 24 календарних дні за відпрацьований робочий рік.")
    lead = compose_answer(messages(blocks=[block])).split("\n")[0]
    assert lead == ("Коротко: 1) тривалістю не менш як 24 календарних дні за відпрацьований робочий рік "
                    "(КЗпП ст. 75).")


@pytest.mark.parametrize(("question", "asks"), [
    ("З якого віку можна голосувати на виборах?", True),  # «віку»: the analyser's lemma is «віка»
    ("А за скільки днів треба попередити роботодавця?", True),  # «скільки» not first
    ("Протягом якого року можна оскаржити?", True),
    ("Чи можна голосувати за кордоном?", False),
])
def test_a_question_asking_for_a_figure_is_read_from_its_words(question: str, asks: bool) -> None:
    from llm.providers.offline import _Scorer

    assert _Scorer(question, []).figure is asks


CHILDCARE = SourceBlock(
    "КЗпП ст. 179", "k179", "Відпустки у зв'язку з вагітністю, пологами і для догляду за дитиною",
    "Відпустка для догляду за дитиною до досягнення нею віку трьох років не надається, якщо дитина перебуває на "
    "державному утриманні. "
    "За бажанням матері одній з них надається відпустка для догляду за дитиною до досягнення нею трирічного віку.")


@pytest.mark.parametrize(("question", "denial_leads"), [
    ("Скільки днів відпустки по догляду за дитиною до трьох років?", False),
    ("Коли відпустка для догляду за дитиною до трьох років не надається?", True),
])
def test_a_rule_denied_on_a_condition_follows_the_rule_unless_the_question_says_not(
        monkeypatch: pytest.MonkeyPatch, question: str, denial_leads: bool) -> None:
    from llm.providers import offline

    # given the denial first and sharing more of the question's words than the rule it excepts (words alone choose)
    monkeypatch.setattr(offline, "_similarity", None)
    answer = compose_answer(messages(blocks=[CHILDCARE], question=question))
    # then the rule leads «Коротко» unless the question asks when it does not apply
    first = QUOTE.search(answer)
    assert first is not None, answer
    assert ("не надається" in first["quote"]) is denial_leads, answer


def test_without_the_factor_the_denial_led(monkeypatch: pytest.MonkeyPatch) -> None:
    from llm.providers import offline

    monkeypatch.setattr(offline, "_similarity", None)
    monkeypatch.setattr(offline, "NEGATED_RULE_FACTOR", 1.0)
    answer = compose_answer(messages(blocks=[CHILDCARE],
                                     question="Скільки днів відпустки по догляду за дитиною до трьох років?"))
    first = QUOTE.search(answer)
    assert first is not None and "не надається" in first["quote"], answer


PAY_KINDS = SourceBlock(
    "Закон «Про оплату праці» ст. 2", "p2", "Структура заробітної плати",
    "Інші заохочувальні та компенсаційні виплати. До них належать виплати у формі винагород за підсумками роботи за "
    "рік, премії за спеціальними системами і положеннями.")


@pytest.mark.parametrize(("cut", "title_quoted"), [(1, False), (0, True)])
def test_a_title_in_an_articles_text_is_not_quoted_as_a_statement(
        monkeypatch: pytest.MonkeyPatch, cut: int, title_quoted: bool) -> None:
    from llm.providers import offline

    # given a title that holds more of the question's words than the sentence under it
    monkeypatch.setattr(offline, "_similarity", None)
    monkeypatch.setattr(offline, "TITLES_CUT", cut)
    answer = compose_answer(messages(blocks=[PAY_KINDS], question="Чи мають платити інші заохочувальні виплати?"))
    # then the title is quoted only when titles are not cut
    assert ("Інші заохочувальні та компенсаційні виплати (" in answer) is title_quoted, answer
