"""A long statute sentence cut to the clauses that hold the question's words lost its first clause — who does what —
and could open inside a bracket: an answer on unpaid wages led with «… погодженим з виборним органом … (а в разі
відсутності таких органів - представниками, обраними і уповноваженими трудовим колективом), але не рідше двох разів
на місяць …». The first clause now leads the cut quote, «…» after it, and the window opens outside the bracket."""

from __future__ import annotations

import pytest

from legaltext.text import question_lemmas
from llm.providers import offline

HEAD = "Заробітна плата виплачується працівникам регулярно в робочі дні у строки,"
TERMS = ("але не рідше двох разів на місяць через проміжок часу, що не перевищує шістнадцяти календарних днів, та не "
         "пізніше семи днів після закінчення періоду, за який здійснюється виплата")
WAGES = (f"{HEAD} встановлені колективним договором або нормативним актом роботодавця, погодженим з виборним органом "
         "первинної профспілкової організації чи іншим уповноваженим на представництво трудовим колективом органом "
         "(а в разі відсутності таких органів - представниками, обраними і уповноваженими трудовим колективом), "
         f"{TERMS}.")
QUESTION = "Як часто роботодавець мусить платити зарплату? Два рази на місяць чи раз?"


def test_a_cut_quote_keeps_the_sentences_first_clause_and_opens_outside_a_bracket() -> None:
    clipped = offline._clip(WAGES, set(question_lemmas(QUESTION)))
    assert clipped == f"{HEAD} … {TERMS}"
    assert len(clipped) <= offline.CLIP_CHARS


def test_without_the_head_the_quote_opened_mid_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offline, "CLAUSE_HEAD_CHARS", 0)
    clipped = offline._clip(WAGES, set(question_lemmas(QUESTION)))
    assert clipped.startswith("… ") and HEAD not in clipped


def test_a_window_grown_from_a_clause_inside_a_bracket_stays_there() -> None:
    # the question's words are inside the bracket: the window may open there, it is what was asked
    clauses = ["Роботодавець повідомляє,", "(за згодою представників,", "обраних трудовим колективом),", "інше."]
    assert offline._out_of_bracket(clauses, 2, 2) == 2
    assert offline._out_of_bracket(clauses, 2, 3) == 3
