"""A long sentence with a list in brackets: КЗпП ст. 38's reasons for leaving at once. Split at each «;» of the
list, the writer quoted «… (переїзд на нове місце проживання» — the list's first item, the rule after the bracket
lost; clipped by clauses, the whole sentence kept the bracket's opening and lost the rule too. The bracket is now one
sentence with its rule, and a long one is cut inside the bracket, to the items the question names."""

from __future__ import annotations

import pytest

from assemble.prompt import SourceBlock, legacy_messages
from legaltext.sentences import PARENTHESES_JOIN_MAX, split_sentences, with_brackets_closed
from legaltext.text import question_lemmas
from llm.providers import offline
from pipeline.contracts import SpecialistProfile

RULE = "роботодавець повинен розірвати трудовий договір у строк, про який просить працівник"
REASONS = ("переїзд на нове місце проживання; переведення чоловіка або дружини на роботу в іншу місцевість; вступ до "
           "закладу освіти; неможливість проживання у даній місцевості, підтверджена медичним висновком; догляд за "
           "дитиною до досягнення нею чотирнадцятирічного віку або дитиною з інвалідністю; догляд за хворим членом "
           "сім'ї відповідно до медичного висновку або особою з інвалідністю I групи; вихід на пенсію; прийняття на "
           "роботу за конкурсом, а також з інших поважних причин")
LEAVING = ("У разі, коли заява працівника про звільнення з роботи за власним бажанням зумовлена неможливістю "
           f"продовжувати роботу ({REASONS}), {RULE}.")
KZPP_38 = SourceBlock("КЗпП ст. 38", "z38", None,
                      "Працівник має право розірвати трудовий договір, укладений на невизначений строк, попередивши "
                      f"про це роботодавця письмово за два тижні.\n{LEAVING}")


def answer(question: str) -> str:
    messages = legacy_messages(profile=SpecialistProfile(slug="demo"), blocks=[KZPP_38], question=question)
    return offline.compose_answer(messages)


def test_a_semicolon_inside_brackets_ends_no_sentence_for_the_writer() -> None:
    pieces = split_sentences(LEAVING)
    assert pieces[0].endswith("(переїзд на нове місце проживання;")  # what ingest keeps: its vectors' texts
    assert with_brackets_closed(pieces) == [LEAVING]


def test_a_bracket_never_closed_or_longer_than_the_bound_joins_nothing() -> None:
    unclosed = ["Перелік (перший пункт;", "другий пункт;", "третій пункт."]
    assert with_brackets_closed(unclosed) == unclosed
    long = ["Перелік (пункт;", *[f"пункт {i};" for i in range(PARENTHESES_JOIN_MAX)], "останній)."]
    assert with_brackets_closed(long) == long
    assert with_brackets_closed(["Звичайне речення.", "1) пункт списку;", "2) ще один."]) == [
        "Звичайне речення.", "1) пункт списку;", "2) ще один."]


def test_the_rule_after_a_long_bracket_is_quoted() -> None:
    text = answer("Чи можу я звільнитися за власним бажанням без відпрацювання двох тижнів?")
    assert RULE in text
    assert "(переїзд на нове місце проживання …), роботодавець повинен" in text


def test_a_bracket_item_the_question_names_stays_in_the_quote() -> None:
    keep = set(question_lemmas("Я вступаю до закладу освіти в іншому місті. Чи мушу відпрацювати два тижні?"))
    clipped = offline._clip(LEAVING, keep)
    assert "вступ до закладу освіти" in clipped and clipped.endswith(RULE)
    assert "догляд за дитиною" not in clipped and len(clipped) <= offline.CLIP_CHARS


def test_without_the_fold_the_clauses_cut_lost_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offline, "BRACKET_FOLD", 0)
    keep = set(question_lemmas("Чи можу я звільнитися за власним бажанням без відпрацювання двох тижнів?"))
    assert RULE not in offline._clip(LEAVING, keep)
