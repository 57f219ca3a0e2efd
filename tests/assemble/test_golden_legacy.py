"""Flag OFF: the writer's prompt is byte-identical to the golden files written from the foundation's legacy
output (tests/assemble/golden/*.json), both from the legacy renderer and along U10's path from a RunContext."""

from __future__ import annotations

import pytest

from assemble.prompt import legacy_messages
from assemble.render import legacy_prompt, writer_prompt_from_context
from llm.tokenizer import count_tokens
from pipeline.contracts import AssembledPrompt, IncludedSnippet, Intake
from pipeline.document import dump
from tests.assemble.legacy_cases import CASES, LegacyCase, serialize

IDS = [c.name for c in CASES]


def context_of(case: LegacyCase) -> tuple[dict[str, object], dict[str, str]]:
    """The RunContext and the snippet store a run with exactly these inputs would have after U9 (flag OFF)."""
    texts = {b.r2_key: b.text for b in case.blocks}
    snippets = [IncludedSnippet(source="lldbi", r2_key=b.r2_key, r2_keys=[b.r2_key], article_ref=b.article_ref,
                                heading=b.heading, rank=i, tokens=1, chars=len(b.text))
                for i, b in enumerate(case.blocks, start=1)]
    prompt = AssembledPrompt(meta={"assembler": "legacy", "tokenizer": "o200k_base"}, law_source_refs=[],
                             budget={"law_chars": 0, "memory_chars": 0, "doc_chars": 0, "history_chars": 0},
                             snippets=snippets)
    intake = Intake(question=case.question, normalized=case.question, specialist=case.profile,
                    received_at="2025-03-01T12:00:00+00:00")
    doc: dict[str, object] = {"intake": dump(intake), "assembled_prompt": dump(prompt)}
    if case.coverage_gap is not None:
        doc["coverage_gap"] = dump(case.coverage_gap)
    return doc, texts


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_legacy_renderer_reproduces_the_golden_bytes(case: LegacyCase) -> None:
    messages = legacy_messages(profile=case.profile, blocks=case.blocks, question=case.question,
                               coverage_gap=case.coverage_gap)
    assert serialize(messages) == case.golden_path.read_bytes()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_flag_off_along_the_u10_path_is_byte_identical_to_the_golden_file(case: LegacyCase) -> None:
    # given a RunContext whose assembled_prompt took the legacy path, and the snippet texts in storage
    doc, texts = context_of(case)
    # when U10 (and replay, prompt_diff, ask --show-prompt) rebuild the writer prompt from it
    prompt = writer_prompt_from_context(doc, texts=texts, corrections=[], count=count_tokens)
    # then
    assert prompt.assembler == "legacy" and prompt.layer_manifest is None
    assert serialize(prompt.messages) == case.golden_path.read_bytes()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_legacy_token_count_is_the_exact_sum_over_the_messages(case: LegacyCase) -> None:
    prompt = legacy_prompt(profile=case.profile, blocks=case.blocks, question=case.question,
                           coverage_gap=case.coverage_gap, count=count_tokens)
    assert prompt.total_tokens == sum(count_tokens(m.content) for m in prompt.messages)
    assert prompt.context_tokens == count_tokens(prompt.messages[1].content)


def test_the_golden_files_are_all_pinned() -> None:
    on_disk = {p.stem for p in CASES[0].golden_path.parent.glob("*.json")}
    assert on_disk == {c.name for c in CASES}
