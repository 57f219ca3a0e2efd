"""U9's adapter (engine/runners.run_u9) over a real snippet store: a snippet that cannot be loaded is excluded with
warnings in assembled_prompt.meta, snippet texts never reach the RunContext, and on the layered path the refs U11
checks against are exactly the sources the kb layer kept."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.core.files.storage import FileSystemStorage

from assemble.config import assemble_config
from assemble.layers import PromptBudgetExceeded
from assemble.prompt import LAYERED_WRITER_INSTRUCTIONS
from assemble.render import blocks_with_tokens
from engine.runners import StageEnv, StageResult, _u9_layered, run_u9
from engine.stage_env import stage_config
from flags.registry import PROMPT_ASSEMBLER_ENABLED
from knowledge.snippets import SnippetStore
from llm.tokenizer import count_tokens, encoding_name_for_model
from pipeline import contracts as c
from pipeline.document import dump
from tests.assemble.legacy_cases import FULL_SPECIALIST

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
SENTENCE = "Працівникам надається щорічна основна відпустка тривалістю не менш як 24 календарних дні. "
REFS = ["КЗпП ст. 75", "КЗпП ст. 76", "КЗпП ст. 77"]
KEYS = ["k/75.txt", "k/76.txt", "k/77.txt"]

# small enough that the never-truncated layers leave the kb layer little room: 560 tokens with the writer's rules
# as the legacy prompt has them (112 tokens), plus the answer rules the layered prompt adds
ENVELOPE = 560 + count_tokens(LAYERED_WRITER_INSTRUCTIONS, "gpt-4o-mini") - 112


def document(question: str = "Скільки триває відпустка?") -> dict[str, Any]:
    items = [c.EvidenceItem(source="lldbi", rank=i + 1, score=0.9 - i / 10, act_nreg="322-08", act_label="КЗпП",
                            article=ref.rsplit(" ", 1)[1], article_ref=ref, r2_keys=[key])
             for i, (ref, key) in enumerate(zip(REFS, KEYS, strict=True))]
    return {
        "intake": dump(c.Intake(question=question, normalized=question, specialist=FULL_SPECIALIST,
                                received_at=NOW.isoformat())),
        "query_profile": dump(c.QueryProfile(mode="law", law_only=True, complexity="simple")),
        "search_plan": dump(c.SearchPlan(steps=[], channels=["lldbi_chunks"], docs_probe=False)),
        "evidence_assembly": dump(c.EvidenceAssembly(items=items, support_level="strong")),
    }


def env(store: SnippetStore, *, layered: bool) -> StageEnv:
    model = "gpt-4o-mini"
    return StageEnv(run_id=str(uuid.uuid4()), attempt=1, question="q", specialist=FULL_SPECIALIST,
                    flags={PROMPT_ASSEMBLER_ENABLED: layered}, now=NOW, config=stage_config(),
                    lexicon=lambda: pytest.fail("U9 needs no lexicon"), search=lambda: pytest.fail("no search"),
                    snippets=lambda: store, count_tokens=lambda t: count_tokens(t, model),
                    tokenizer_id=encoding_name_for_model(model), gateway=lambda: pytest.fail("no model call"))


@pytest.fixture
def store(tmp_path: Path) -> SnippetStore:
    s = SnippetStore(FileSystemStorage(location=str(tmp_path)))
    for i, key in enumerate(KEYS):
        s.put(key, f"Стаття {75 + i}. " + SENTENCE * 6)
    return s


def prompt_of(result: StageResult) -> c.AssembledPrompt:
    section = result.write["assembled_prompt"]
    assert isinstance(section, c.AssembledPrompt)
    return section


@pytest.mark.django_db
def test_a_snippet_that_cannot_be_loaded_is_excluded_and_u9_says_so(store: SnippetStore) -> None:
    # given the second article's text is gone from storage
    store.storage.delete(KEYS[1])
    # when
    prompt = prompt_of(run_u9(document(), env(store, layered=False)))
    # then
    assert f"snippet_load_failed:{KEYS[1]}" in prompt.meta.warnings
    assert f"evidence_excluded:{REFS[1]}" in prompt.meta.warnings
    assert [s.article_ref for s in prompt.snippets] == [REFS[0], REFS[2]]
    assert [r.article_ref for r in prompt.law_source_refs] == [REFS[0], REFS[2]]


@pytest.mark.django_db
@pytest.mark.parametrize("layered", [False, True], ids=["legacy", "layered"])
def test_no_snippet_text_is_written_to_the_run_context(store: SnippetStore, layered: bool) -> None:
    stored = json.dumps(dump(prompt_of(run_u9(document(), env(store, layered=layered)))), ensure_ascii=False)
    assert SENTENCE.strip() not in stored
    assert all(key in stored for key in KEYS)


@pytest.mark.django_db
def test_on_the_layered_path_u9_sizes_the_evidence_to_the_room_the_kb_layer_has(
        store: SnippetStore, settings: Any) -> None:
    # given a small envelope that the specialist's layers take most of
    settings.U9_PROFILE_TOKENS = {settings.U9_BUDGET_PROFILE: ENVELOPE}
    # when
    prompt = prompt_of(run_u9(document(), env(store, layered=True)))
    # then U9 cut the evidence to the kb layer's room at sentence ends, and the kb layer dropped no source
    manifest = {m.id: m for m in prompt.layer_manifest or []}
    assert manifest["kb"].included and not manifest["kb"].truncated
    assert manifest["kb"].source_refs == [s.article_ref for s in prompt.snippets]
    assert any(s.truncated_to_chars for s in prompt.snippets) or len(prompt.snippets) < len(REFS)
    assert [r.article_ref for r in prompt.law_source_refs] == manifest["kb"].source_refs
    assert (prompt.meta.prompt_tokens or 0) <= ENVELOPE + count_tokens("Питання: Скільки триває відпустка?")


@pytest.mark.django_db
def test_on_the_layered_path_u11_checks_against_exactly_the_sources_the_kb_layer_kept(
        store: SnippetStore, settings: Any) -> None:
    # given evidence U9 sized for the whole envelope (as the legacy path does), so the kb layer has to give way
    settings.U9_PROFILE_TOKENS = {settings.U9_BUDGET_PROFILE: ENVELOPE}
    settings.U9_MODE_SHARES = {"law": {"law": 1.0, "memory": 0.0, "history": 0.0}}
    legacy = prompt_of(run_u9(document(), env(store, layered=False)))
    texts, _ = store.get_many(KEYS)
    blocks, _ = blocks_with_tokens(legacy.snippets, texts)
    doc = document()
    intake_ = c.Intake.model_validate(doc["intake"])
    # when the layered assembler builds the prompt from it
    prompt = _u9_layered(env(store, layered=True), legacy, blocks, intake_, "law", None, assemble_config())
    # then
    manifest = {m.id: m for m in prompt.layer_manifest or []}
    kept = manifest["kb"].source_refs or []
    assert 0 < len(kept) < len(prompt.snippets)
    assert [r.article_ref for r in prompt.law_source_refs] == kept
    assert [w for w in prompt.meta.warnings if w.startswith("kb_layer_truncated:")] == [
        f"kb_layer_truncated:{s.article_ref}" for s in prompt.snippets if s.article_ref not in kept]
    assert (prompt.meta.prompt_tokens or 0) <= ENVELOPE + count_tokens("Питання: Скільки триває відпустка?")
    assert prompt.meta.layer_budget is not None and prompt.meta.layer_budget.total == ENVELOPE
    assert prompt.meta.correction_ids == []


@pytest.mark.django_db
def test_the_overflow_error_leaves_u9_with_its_counts(store: SnippetStore, settings: Any) -> None:
    settings.U9_PROFILE_TOKENS = {settings.U9_BUDGET_PROFILE: 30}
    with pytest.raises(PromptBudgetExceeded) as caught:
        run_u9(document(), env(store, layered=True))
    assert caught.value.budget_tokens == 30 and set(caught.value.layer_tokens) == {"red_lines", "soul",
                                                                                      "response_contract"}
