"""What the offline writer quotes: a statement, never a list item cut off from its opening nor the tail of a
sentence an evidence chunk begins inside; and «звільнення від» (release) is not the dismissal a question asks
about."""

from __future__ import annotations

import pytest

from assemble.prompt import SourceBlock, legacy_messages
from llm.providers import offline
from pipeline.contracts import SpecialistProfile

PROFILE = SpecialistProfile(slug="demo")
# the second chunk of КЗпП ст. 43-1: the list's opening («… допускається у випадках:») stands in the first chunk
LIST_TAIL = SourceBlock(
    "КЗпП ст. 43-1", "k43-1#c1", None,
    "звільнення працівника, який вчинив за місцем роботи розкрадання майна роботодавця;\n"
    "звільнення домашнього працівника.\n"
    "Законодавством можуть бути передбачені й інші випадки розірвання трудового договору з ініціативи "
    "роботодавця без згоди виборного органу первинної профспілкової організації.")
ABSENCE = SourceBlock(
    "КЗпП ст. 40", "k40", None,
    "Трудовий договір може бути розірваний роботодавцем у випадку прогулу (в тому числі відсутності на роботі "
    "більше трьох годин протягом робочого дня) без поважних причин.")
QUESTION = "Мене звільнили з роботи за прогул. Чи могли звільнити домашнього працівника без поважних причин?"


def answer(question: str, *blocks: SourceBlock) -> str:
    return offline.compose_answer(legacy_messages(profile=PROFILE, blocks=list(blocks), question=question))


def quoted_lines(text: str) -> list[str]:
    return [line.split(": ", 1)[-1] if line.startswith("Коротко") else line[2:]
            for line in text.splitlines() if line.startswith(("Коротко: ", "— "))]


def test_a_list_item_without_its_opening_is_quoted_as_a_continuation_or_not_at_all() -> None:
    lines = quoted_lines(answer(QUESTION, LIST_TAIL, ABSENCE))
    assert lines, "the answer quotes the statements"
    # never as if it were a statement of its own
    assert not any(line[:1].islower() for line in lines), lines
    # an item too short to say anything alone is not quoted; a longer one says it continues something
    assert not any("звільнення домашнього" in line for line in lines), lines
    theft = [line for line in lines if "розкрадання" in line]
    assert theft and all(line.startswith("… звільнення працівника, який вчинив") for line in theft), lines


def test_without_the_rule_the_items_were_quoted_as_statements(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offline, "ORPHAN_ITEMS_CUT", 0)
    lines = quoted_lines(answer(QUESTION, LIST_TAIL, ABSENCE))
    assert any(line.startswith("звільнення домашнього працівника") for line in lines), lines


def test_an_opening_in_the_same_chunk_carries_its_items() -> None:
    whole = SourceBlock("КЗпП ст. 43-1", "k43-1", None,
                        "Розірвання трудового договору з ініціативи роботодавця без згоди профспілки допускається у "
                        "випадках:\nзвільнення домашнього працівника.")
    lines = quoted_lines(answer("Чи можна звільнити домашнього працівника без згоди профспілки?", whole))
    assert lines and lines[0].startswith("Розірвання трудового договору"), lines
    assert "звільнення домашнього працівника" in lines[0]


PREGNANT_RELEASE = SourceBlock(
    "КЗпП ст. 178", "k178", None,
    "До вирішення питання про надання вагітній жінці іншої роботи вона підлягає звільненню від роботи із "
    "збереженням середнього заробітку.")
PREGNANT_DISMISSAL = SourceBlock(
    "КЗпП ст. 184", "k184", None,
    "Звільнення вагітних жінок з ініціативи роботодавця не допускається, крім випадків повної ліквідації "
    "підприємства.")


def test_a_release_from_work_does_not_answer_a_dismissal_question() -> None:
    sentences = [PREGNANT_RELEASE.text, PREGNANT_DISMISSAL.text]
    scorer = offline._Scorer("Чи можна звільнити вагітну жінку?", sentences)
    release, dismissal = (scorer.lemmas[i] & scorer.own for i in range(2))
    # «звільненню від роботи» is its own word: only «вагітний» and «жінка» are shared with the question
    assert offline._unit("звільнити") in dismissal and offline._unit("звільнити") not in release
    lead = quoted_lines(answer("Чи можна звільнити вагітну жінку?", PREGNANT_RELEASE, PREGNANT_DISMISSAL))[0]
    assert lead.startswith("Звільнення вагітних жінок"), lead


def test_a_question_about_release_still_meets_the_release() -> None:
    scorer = offline._Scorer("Чи можуть звільнити від роботи вагітну?", [PREGNANT_RELEASE.text])
    assert offline._unit("звільнення_від") in scorer.lemmas[0] & scorer.own
