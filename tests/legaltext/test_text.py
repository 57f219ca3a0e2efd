"""Lemmas of the meaningful words (legaltext/text.py): what BM25 indexes and what a question searches with."""

from __future__ import annotations

from pathlib import Path

import pytest

from knowledge.lexical import document_vector, question_vector, term_id
from legaltext.lay_terms import EXPANSION_WEIGHT
from legaltext.text import (
    SURZHYK_FILE,
    _morph,
    as_question,
    content_lemmas,
    is_title_phrase,
    lemma,
    mended,
    question_lemmas,
    read_surzhyk,
    readings,
    spelled,
    ukrainian_words,
    verbal_nouns,
    without_courtesies,
)


@pytest.mark.parametrize(("form", "drifted"), [("його", "йога"), ("мене", "мен"), ("мені", "мен"),
                                               ("тому", "том"), ("бути", "бута")])
def test_a_pronoun_the_analyser_reads_as_another_word_is_not_a_content_word(form: str, drifted: str) -> None:
    # the analyser's first reading of the form is a noun («його» → «йога»): as a lemma it would pass the stopwords
    assert lemma(form) == drifted
    assert drifted not in content_lemmas(f"Чи можуть {form} звільнити?")


def test_a_first_person_story_keeps_its_legal_words_only() -> None:
    assert content_lemmas("Мене звільнили, а його права мені ніхто не пояснив") == [
        "звільнити", "право", "ніхто", "пояснити"]


@pytest.mark.parametrize(("typed", "spelled"), [
    ("зобовязаний", "зобов'язаний"), ("обовязково", "обов'язково"), ("компютер", "комп'ютер"), ("пять", "п'ять"),
])
def test_a_word_typed_without_its_apostrophe_meets_the_statutes_spelling(typed: str, spelled: str) -> None:
    assert lemma(typed) == lemma(spelled)


@pytest.mark.parametrize("word", ["бюро", "рюкзак", "пюре"])
def test_a_known_word_with_a_labial_before_ya_keeps_its_spelling(word: str) -> None:
    assert "'" not in lemma(word)


@pytest.mark.parametrize(("typed", "meant"), [
    ("поясненя", "пояснення"), ("прізвіще", "прізвище"), ("чиновнік", "чиновник"), ("гарнитури", "гарнітури"),
    ("безробітью", "безробіттю"), ("адваката", "адвоката"), ("просрочку", "прострочку"), ("підїзду", "під'їзду"),
])
def test_a_slip_in_a_question_word_is_mended_to_the_one_word_it_can_be(typed: str, meant: str) -> None:
    assert spelled(typed) == meant
    assert lemma(meant) in question_lemmas(f"Що робити, якщо {typed}?")


@pytest.mark.parametrize("word", [
    "сбор",  # shorter than SLIP_MIN_CHARS: abbreviations and short words are left alone
    "реклмою",  # «рекламою» and «реклямою» are both one insertion away: no guess
    "підпрацювати",  # «відпрацювати» is one edit away, but a slip keeps the first letter
    "звільнили", "лікарняному", "роботодавець",  # known words are never changed
])
def test_a_word_with_no_single_likely_mend_stays_as_typed(word: str) -> None:
    assert spelled(word) == word


def test_a_question_is_mended_word_by_word_keeping_its_capitals_and_punctuation() -> None:
    # the model that embeds the question reads «Поясненя» or «чиновнік» as no word it knows
    assert mended("Поясненя не дали, а ЧИНОВНІК пішов.") == "Пояснення не дали, а ЧИНОВНИК пішов."
    assert mended("Мама-пенсіонерка, підїзду, гарнитури!") == "Мама-пенсіонерка, під'їзду, гарнітури!"


@pytest.mark.parametrize("text", ["Мене звільнили з роботи.", "Реклмою сбор", "QR-код і ТЦК", ""])
def test_known_words_and_words_with_no_single_mend_stay_as_written(text: str) -> None:
    assert mended(text) == text


@pytest.mark.parametrize(("typed", "read"), [
    ("чи можуть звільнити на лікарняному", "Чи можуть звільнити на лікарняному?"),
    ("мене звільнили. це законно", "Мене звільнили. це законно?"),
    ("скільки днів відпустки 2024", "Скільки днів відпустки 2024?"),
    ("Мене звільнили на лікарняному.", "Мене звільнили на лікарняному."),
    ("Що робити...", "Що робити..."),
    ("(ст. 40 КЗпП)", "(ст. 40 КЗпП)"),  # a first sign stays, so does a last bracket
    ("iPhone не ремонтують", "iPhone не ремонтують?"),
    ("", ""),
])
def test_a_question_typed_without_a_capital_or_its_mark_reads_as_one(typed: str, read: str) -> None:
    assert as_question(typed) == read


@pytest.mark.parametrize(("typed", "asked"), [
    ("Доброго дня! Підкажіть, будь ласка, чи можуть звільнити на лікарняному? Дякую!",
     "чи можуть звільнити на лікарняному?"),
    ("Добрий день. Маю питання. Мене звільнили. Заздалегідь дякую за відповідь.", "Мене звільнили."),
    ("Шановні юристи, допоможіть! Сусід залив квартиру.", "Сусід залив квартиру."),
    ("Чи можна звільнити вагітну? Буду вдячна за відповідь!", "Чи можна звільнити вагітну?"),
    # courtesy words inside what is asked stay; so does a greeting that is all the user wrote
    ("Мені сказали: дякую, ви звільнені. Це законно?", "Мені сказали: дякую, ви звільнені. Це законно?"),
    ("Привітати колегу з днем народження в робочий час можна?",
     "Привітати колегу з днем народження в робочий час можна?"),
    ("Доброго дня!", "Доброго дня!"),
])
def test_the_courtesies_a_message_opens_and_closes_with_are_not_the_question(typed: str, asked: str) -> None:
    assert without_courtesies(typed) == asked


def test_russian_and_surzhyk_forms_are_read_in_ukrainian_before_slips_are_mended() -> None:
    typed = "Мене УВОЛИЛИ без отработки, а отпуска не дали. Сосід каже, що так положено."
    assert ukrainian_words(typed) == ("Мене ЗВІЛЬНИЛИ без відпрацювання, а відпустки не дали. Сусід каже, що так "
                                      "належить.")
    assert mended("отпуска") == "опуска"  # why the table reads first: one letter from a Ukrainian word
    assert ukrainian_words("Лишити дитину вдома на вихідні") == "Лишити дитину вдома на вихідні"


def test_the_military_and_rental_words_people_type_in_russian_are_read_in_ukrainian() -> None:
    assert ukrainian_words("Прийшла повестка з военкомата, а в мене отсрочка") == (
        "Прийшла повістка з військкомату, а в мене відстрочка")
    assert ukrainian_words("Арендатор не платить за аренду") == "Орендар не платить за оренду"


@pytest.mark.parametrize(("text", "error"), [
    ("отпуск\tвідпустка\nотпуск\tвідпуск\n", "given twice"),
    ("отпуск відпустка\n", "expected"),
    ("два слова\tвідпустка\n", "expected"),
])
def test_a_malformed_or_repeated_surzhyk_line_is_an_error(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "surzhyk.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=error):
        read_surzhyk(path)


def test_the_shipped_surzhyk_table_reads() -> None:
    table = read_surzhyk(SURZHYK_FILE)
    assert table["уволили"] == "звільнили" and all(k == k.lower() for k in table)


def test_a_compound_the_dictionary_lacks_is_also_read_as_its_parts() -> None:
    lemmas = question_lemmas("Фірма-покупець не оплатила поставку")
    assert {"фірма-покупець", "фірма", "покупець"} <= set(lemmas)
    assert "покупець" not in content_lemmas("Фірма-покупець не оплатила поставку")  # statutes keep their tokens


@pytest.mark.parametrize(("one", "other"), [("посада", "посаду"), ("рік", "року"), ("село", "селі")])
def test_two_forms_of_one_word_share_a_reading(one: str, other: str) -> None:
    # the analyser's first readings differ («посаду» → «посад», «року» → «рок»): lemmas alone never meet
    assert lemma(one) != lemma(other)
    assert set(readings(one)) & set(readings(other))


@pytest.mark.parametrize(("statute", "question"), [("особа, яка займає посаду", "моя посада"),
                                                   ("протягом року", "через рік")])
def test_a_question_meets_the_statute_in_another_form_of_its_word(statute: str, question: str) -> None:
    doc, query = document_vector(statute), question_vector(question)
    shared = set(doc.indices) & set(query.indices)
    assert shared


def test_a_word_read_two_ways_shares_one_occurrence_between_its_readings() -> None:
    doc = dict(zip(*document_vector("строк року").__dict__.values(), strict=True))
    weight = {r: doc[term_id(r)] for r in (*readings("року"), "строк")}
    assert weight["рік"] == weight["рок"] < weight["строк"]  # «строк» has one reading: a whole occurrence


@pytest.mark.parametrize(("typed", "meant"), [
    ("Чи можуть звiльнити мене пiд час лiкарняного?", "Чи можуть звільнити мене під час лікарняного?"),  # Latin i
    ("ВIДПУСТКА", "ВІДПУСТКА"),  # capital Latin I
    ("мoжна cпитати", "можна спитати"),  # Latin o, c
    ("їx", "їх"),  # Latin x
])
def test_latin_look_alikes_inside_a_ukrainian_word_are_read_as_cyrillic(typed: str, meant: str) -> None:
    from legaltext.text import unmixed

    assert unmixed(typed) == meant
    assert content_lemmas(typed) == content_lemmas(meant)


@pytest.mark.parametrize("text", ["QR-код", "III-Б", "OLX", "ТОВ «Agro Trade»", "iPhone", "Windows", "5G-мережа"])
def test_latin_words_and_latin_parts_of_a_compound_stay_as_written(text: str) -> None:
    from legaltext.text import unmixed

    assert unmixed(text) == text


def test_a_mixed_word_with_a_latin_letter_that_has_no_cyrillic_twin_stays_as_written() -> None:
    from legaltext.text import unmixed

    # «s» has no Cyrillic twin: the word is not a Ukrainian word with a slip, so nothing in it is changed
    assert unmixed("Кsenia") == "Кsenia"


@pytest.mark.parametrize(("verb", "nouns"), [
    ("звільнити", ("звільнення",)),
    ("розірвати", ("розірвання",)),
    ("оскаржити", ("оскарження",)),
    ("позбавити", ("позбавлення",)),  # «в» → «вл»
    ("засудити", ("засудження",)),  # «д» → «дж»
    ("скоротити", ("скорочення",)),  # «т» → «ч»
    ("прийняти", ("прийняття",)),
    ("звернутися", ("звернення",)),
])
def test_a_verb_reads_as_the_noun_of_its_action(verb: str, nouns: tuple[str, ...]) -> None:
    assert verbal_nouns(verb) == nouns


@pytest.mark.parametrize("word", ["звільнення", "суд", "мати", "відпустка", "законно"])
def test_other_words_have_no_verbal_noun(word: str) -> None:
    assert verbal_nouns(word) == ()


def test_only_nouns_the_dictionary_knows_are_formed() -> None:
    # «пустиння» (a desert) is a word, but not the action of «пустити»: «-ння» follows only «а»/«я»
    assert "пустиння" not in verbal_nouns("пустити")
    verbs = {lemma(w) for w in "виплатити відмовити перевести вимагати стягнути затримати відшкодувати".split()}
    for verb in verbs:
        for noun in verbal_nouns(verb):
            assert any(str(p.normal_form) == noun and "NOUN" in p.tag for p in _morph().parse(noun)), (verb, noun)


def test_a_question_asked_with_the_verb_meets_the_statute_worded_with_its_noun() -> None:
    statute = document_vector("Не допускається звільнення працівника в період його тимчасової непрацездатності.")
    query = question_vector("Чи можуть мене звільнити?")
    weights = dict(zip(query.indices, query.values, strict=True))

    assert weights[term_id("звільнити")] == 1.0 and weights[term_id("звільнення")] == EXPANSION_WEIGHT
    assert term_id("звільнення") in statute.indices


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("вона підлягає звільненню від роботи", ["підлягати", "звільнення_від", "робот"], id="noun"),
        pytest.param("Чи можуть звільнити від покарання?", ["звільнення_від", "покарання"], id="verb-asked"),
        pytest.param("особа звільняється від сплати", ["особа", "звільнення_від", "сплата"], id="reflexive"),
        pytest.param("Чи можна звільнити вагітну жінку?", ["можний", "звільнити", "вагітний", "жінка"],
                     id="dismissal-untouched"),
        pytest.param("звільнення з роботи від імені власника", ["звільнення", "робот", "ім'я", "власник"],
                     id="від-not-next"),
    ],
)
def test_release_is_read_apart_from_dismissal(text: str, expected: list[str]) -> None:
    assert content_lemmas(text) == expected


@pytest.mark.parametrize(("collective", "cardinal"), [("троє", "трьох"), ("двоє", "двох"), ("обоє", "обох")])
def test_a_collective_numeral_reads_as_its_cardinal(collective: str, cardinal: str) -> None:
    # «троє і більше дітей» (the mobilisation law) is what a user means by «батька трьох дітей»: the analyser read
    # «троє» first as «троя», so the writer, matching first readings, never met it
    assert lemma(collective) == lemma(cardinal)
    assert content_lemmas(f"{collective} дітей")[0] == question_lemmas(f"батька {cardinal} дітей")[1]


@pytest.mark.parametrize("title", ["Інші заохочувальні та компенсаційні виплати.", "Загальні положення про правочини",
                                   "Органи державної виконавчої служби", "Додаткова заробітна плата."])
def test_a_title_in_running_text_reads_as_a_title(title: str) -> None:
    assert is_title_phrase(title)


@pytest.mark.parametrize("statement", [
    "Усі об'єднання громадян рівні перед законом.", "Управитель діє без довіреності.",
    "Заява про відмову повинна бути вмотивованою.", "Шлюб - це союз жінки та чоловіка.",
    "Права людини невідчужувані.", "кожен має право на житло",
])
def test_a_short_statement_is_not_a_title(statement: str) -> None:
    # an adjective after its noun predicates, a verb read first as a noun's form («діє») is still a verb
    assert not is_title_phrase(statement)
