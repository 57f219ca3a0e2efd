"""Article references as people write them in a question (legaltext/references.py)."""

from __future__ import annotations

import pytest

from legaltext.references import article_mentions, article_numbers, without_mentions


@pytest.mark.parametrize(("text", "numbers"), [
    ("ст. 40 КЗпП", ["40"]),
    ("ст 40 КЗпП", ["40"]),
    ("ст.40 КЗпП", ["40"]),
    ("Стаття 5 Конституції", ["5"]),
    ("статті 36 та 40 КЗпП", ["36", "40"]),
    ("ч. 2 ст. 40 КЗпП", ["40"]),
    ("частини другої статті 43-1", ["43-1"]),
    ("40 стаття КЗпП", ["40"]),
    ("Що каже 40-ва стаття КЗпП?", ["40"]),
    ("частина 2 статті 40", ["40"]),
    ("Мені 40 років, я живу в місті 5 років", []),
    ("мост 40 метрів", []),  # a word ending in «ст» is no reference
    ("Скільки статей 3 у законі?", ["3"]),
    ("статті 40, 41 і 42 КЗпП", ["40", "41", "42"]),
    ("40‑ва стаття ККУ", ["40"]),  # a non-breaking hyphen, as phones type it
    ("ст. ٤٠ КЗпП", []),  # the law prints its numbers in ASCII digits
    # an act's final provisions are named, not numbered: one unit (legaltext/chunking.py FINAL_PROVISIONS)
    ("Що сказано в перехідних положеннях Закону про ЄСВ?", ["ПП"]),
    ("прикінцеві та перехідні положення Цивільного кодексу", ["ПП"]),
    ("Прикінцеві і перехідні положення ЦК і ст. 5", ["ПП", "5"]),
    ("у ПРИКІНЦЕВИХ ПОЛОЖЕННЯХ закону", ["ПП"]),
    ("Положення про відпустки і перехідний період", []),  # «положення» alone, a «перехідний» period: no unit
    ("положеннями перехідного характеру", []),
])
def test_the_numbers_a_question_names(text: str, numbers: list[str]) -> None:
    assert article_numbers(text) == numbers


def test_a_part_is_kept_as_written() -> None:
    (mention,) = article_mentions("ч. 2 ст. 40 КЗпП")
    assert (mention.part, mention.numbers, mention.matched) == ("2", ("40",), "ч. 2 ст. 40")


def test_the_final_provisions_are_one_mention_whatever_their_words() -> None:
    (mention,) = article_mentions("Що кажуть прикінцеві та перехідні положення КЗпП?")
    assert (mention.numbers, mention.matched, mention.part) == (("ПП",), "прикінцеві та перехідні положення", None)


def test_without_mentions_leaves_the_rest_of_the_question() -> None:
    assert without_mentions("Що каже ст. 5 Конституції?").split() == ["Що", "каже", "Конституції?"]
    assert without_mentions("40 стаття КЗпП").split() == ["КЗпП"]
