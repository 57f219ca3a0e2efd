"""Seed 004's mutual-exclusion rules, in both modes: KB, soul and directives each appear exactly once in the final
messages. ON: the system prompt is assembled_context, there is no KB user turn, the soul is not read a second time
and the directives are not rendered a second time."""

from __future__ import annotations

import pytest

from assemble.prompt import LAYERED_WRITER_INSTRUCTIONS
from assemble.render import CorrectionText, WriterPrompt, layered_prompt, legacy_prompt
from llm.tokenizer import count_tokens
from tests.assemble.legacy_cases import BLOCKS, FULL_SPECIALIST, GAP, QUESTION

KB_OPEN, KB_CLOSE = "<kb_context>\n", "\n</kb_context>"  # the tags themselves, not the instructions naming them
BUDGETS = {"directives": 800, "skill": 800, "role": 400, "kb": 6800, "correction": 800, "response_contract": 400}


def render(mode: str, total: int = 8000) -> WriterPrompt:
    if mode == "legacy":
        return legacy_prompt(profile=FULL_SPECIALIST, blocks=BLOCKS, question=QUESTION, coverage_gap=GAP,
                             count=count_tokens)
    return layered_prompt(profile=FULL_SPECIALIST, blocks=BLOCKS, question=QUESTION, coverage_gap=GAP,
                          corrections=[CorrectionText(1, "", "Погано.", "Добре.")], total_tokens=total,
                          budgets=BUDGETS, count=count_tokens)


def occurrences(prompt: WriterPrompt, needle: str) -> int:
    return sum(m.content.count(needle) for m in prompt.messages)


@pytest.mark.parametrize("mode", ["legacy", "layered"])
def test_the_kb_appears_exactly_once(mode: str) -> None:
    prompt = render(mode)
    assert occurrences(prompt, KB_OPEN) == 1 and occurrences(prompt, KB_CLOSE) == 1
    for block in BLOCKS:
        assert occurrences(prompt, f'<source ref="{block.article_ref}"') == 1
        assert occurrences(prompt, block.text) == 1
    assert occurrences(prompt, "<coverage_gap") == 1


@pytest.mark.parametrize("mode", ["legacy", "layered"])
def test_the_soul_appears_exactly_once(mode: str) -> None:
    assert occurrences(render(mode), FULL_SPECIALIST.soul) == 1


@pytest.mark.parametrize("mode", ["legacy", "layered"])
def test_the_directives_appear_exactly_once(mode: str) -> None:
    prompt = render(mode)
    assert occurrences(prompt, "Директиви:") == 1
    for d in FULL_SPECIALIST.directives:
        assert occurrences(prompt, d) == 1


@pytest.mark.parametrize("mode", ["legacy", "layered"])
def test_the_question_is_the_last_user_turn_in_both_modes(mode: str) -> None:
    prompt = render(mode)
    assert prompt.messages[-1].role == "user" and prompt.messages[-1].content == f"Питання: {QUESTION}"


def test_on_the_system_prompt_is_the_assembled_context_and_no_kb_user_turn_is_added() -> None:
    prompt = render("layered")
    assert [m.role for m in prompt.messages] == ["system", "user"]
    assert KB_OPEN in prompt.messages[0].content
    assert not any(KB_OPEN in m.content for m in prompt.messages if m.role == "user")
    assert prompt.layer_manifest is not None and prompt.assembler == "layered"


def test_off_keeps_the_kb_as_a_user_turn_and_has_no_manifest() -> None:
    prompt = render("legacy")
    assert [m.role for m in prompt.messages] == ["system", "user", "user"]
    assert prompt.messages[1].content.startswith(KB_OPEN) and KB_OPEN not in prompt.messages[0].content
    assert prompt.layer_manifest is None and prompt.assembler == "legacy"


def test_on_red_lines_stay_whole_under_a_tiny_budget_and_the_kb_still_appears_exactly_once() -> None:
    # given a budget that holds the never-truncated layers and one source: the kb is cut, not dropped (420 tokens
    # with the legacy writer's rules, 112 tokens, plus the answer rules the layered prompt adds)
    prompt = render("layered", total=420 + count_tokens(LAYERED_WRITER_INSTRUCTIONS, "gpt-4o-mini") - 112)
    manifest = {m.id: m for m in prompt.layer_manifest or []}
    assert manifest["kb"].truncated and manifest["kb"].included
    assert FULL_SPECIALIST.red_lines in prompt.messages[0].content
    assert occurrences(prompt, FULL_SPECIALIST.soul) == 1
    assert occurrences(prompt, KB_OPEN) == 1 and occurrences(prompt, KB_CLOSE) == 1
