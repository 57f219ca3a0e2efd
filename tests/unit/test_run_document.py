"""The typed RunContext (pipeline/context.py): the stored JSON parses into ``RunDocument`` and dumps back unchanged —
generated documents, documents the stages write, old ones missing later keys, corrupt sections, unknown keys —
and a section's owner is declared once, beside it, and read by everything that needs it."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from engine.runners import RUNNERS, StageEnv, StageResult, StageWroteForeignSection, stage_adapter
from orch.policy import STAGES
from pipeline.context import (
    LINEAGE_KEYS,
    MASKED,
    SECTION_OWNER,
    SECTION_TYPES,
    Owner,
    RunDocument,
    sections_from,
    sections_owned_by,
    sections_written_by,
)
from pipeline.contracts import Draft, GapAct, GateDecision, PromptMeta, Shape
from pipeline.document import DOWNSTREAM_OF_RETRIEVAL, WRITER_ARTIFACTS, apply, dump

JSON_TEXT = st.text(max_size=8)
EXTRA_KEY = st.sampled_from(["note", "added_later", "x_debug"])


def _value(annotation: Any, depth: int) -> st.SearchStrategy[Any]:
    """JSON as the database holds it, for one annotated field."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return st.sampled_from(args)
    if origin in (types.UnionType, typing.Union):
        return st.one_of(*(_value(a, depth) for a in args))
    if origin is list:
        return st.lists(_value(args[0], depth + 1), max_size=2 if depth < 2 else 0)
    if origin is dict:
        return st.dictionaries(JSON_TEXT, _value(args[1], depth + 1), max_size=2)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return stored(annotation, depth + 1)
    simple: dict[Any, st.SearchStrategy[Any]] = {
        str: JSON_TEXT, int: st.integers(-5, 10_000), bool: st.booleans(), type(None): st.none(),
        float: st.floats(allow_nan=False, allow_infinity=False, width=32),
    }
    return simple[annotation]


def stored(kind: type[BaseModel], depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """A stored shape of ``kind``: required keys always, optional ones sometimes (older documents lack keys added
    later), and on the open shapes a key the model does not know."""

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, info in kind.model_fields.items():
            if info.is_required() or draw(st.booleans()):
                out[info.alias or name] = draw(_value(info.annotation, depth))
        if issubclass(kind, Shape) and draw(st.booleans()):
            out[draw(EXTRA_KEY)] = draw(JSON_TEXT)
        return out

    return build()


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(sorted(SECTION_TYPES)), unique=True, max_size=6))
    doc: dict[str, Any] = {name: draw(stored(SECTION_TYPES[name])) for name in names}
    if draw(st.booleans()):
        doc[MASKED] = draw(st.lists(st.sampled_from(sorted(SECTION_TYPES)), unique=True, max_size=3))
    if draw(st.booleans()):
        doc["superseded_by"] = draw(JSON_TEXT)
    if draw(st.booleans()):
        doc["rerun_of"] = {"run": draw(JSON_TEXT), "from_stage": draw(st.sampled_from(STAGES))}
    if draw(st.booleans()):
        doc["gate_decision"] = {"expand": "maybe"}  # corrupt: kept as it was
    if draw(st.booleans()):
        doc[draw(EXTRA_KEY)] = draw(st.integers())  # a key no section names
    return doc


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_any_stored_document_dumps_back_unchanged(doc: dict[str, Any]) -> None:
    assert RunDocument.parse(doc).dump() == doc


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(SECTION_TYPES)).flatmap(
    lambda name: st.tuples(st.just(name), stored(SECTION_TYPES[name]))))
def test_a_section_written_by_a_stage_dumps_back_unchanged(named: tuple[str, dict[str, Any]]) -> None:
    # given a section as a stage returns it, written the way the shell writes it (every field, defaults included)
    name, raw = named
    section = SECTION_TYPES[name].model_validate(raw)
    doc = apply({}, write={name: section})
    # when / then
    parsed = RunDocument.parse(doc)
    assert parsed.dump() == doc
    assert getattr(parsed, name) == section


def test_a_masked_section_keeps_its_data_but_a_stage_does_not_see_it() -> None:
    draft = Draft(text="КЗпП ст. 36", citations=[], provider="offline", model="m", attempt=1)
    doc = apply(apply({}, write={"draft": draft}), mask=("draft",))

    parsed = RunDocument.parse(doc)

    assert parsed.draft == draft and parsed.visible().draft is None
    assert parsed.dump() == doc


def test_a_corrupt_section_reads_as_absent_and_is_kept_verbatim() -> None:
    doc = {"gate_decision": {"expand": "nonsense"}, "_masked": "not a list", "answer": [1, 2]}

    parsed = RunDocument.parse(doc)

    assert parsed.gate_decision is None and parsed.answer is None and parsed.masked == []
    assert parsed.corrupt == doc and parsed.dump() == doc


def test_an_open_shape_keeps_unknown_keys_and_leaves_out_optional_ones_it_was_not_given() -> None:
    gap_act = GapAct(nreg="", title="Закон про неіснуюче")
    meta = PromptMeta.model_validate({"mode": "law", "assembler": "layered", "added_later": [1]})

    assert gap_act.model_dump() == {"nreg": "", "title": "Закон про неіснуюче"}  # no "reason": null
    assert meta.model_dump(mode="json") == {"mode": "law", "assembler": "layered", "added_later": [1]}
    assert meta.warnings == [] and meta.tokenizer is None  # absent keys read as their defaults


# --- ownership -----------------------------------------------------------------------------------------------
def test_every_section_has_exactly_one_owner_declared_beside_it() -> None:
    for name, info in RunDocument.model_fields.items():
        owners = [m for m in info.metadata if isinstance(m, Owner)]
        if name in (*LINEAGE_KEYS, "masked"):
            assert owners == [], name
        else:
            assert len(owners) == 1 and owners[0].stage in STAGES, name
    assert set(SECTION_OWNER) == set(SECTION_TYPES)
    assert {o.stage for o in SECTION_OWNER.values()} == set(STAGES)  # every stage leaves something


def test_the_sets_orch_masks_and_resets_are_what_the_later_stages_own() -> None:
    assert DOWNSTREAM_OF_RETRIEVAL == ("evidence_assembly", "legal_reasoning", "assembled_prompt", "draft",
                                       "verify_result")
    assert WRITER_ARTIFACTS == sections_owned_by("U10", "U11") == ("draft", "verify_result")


@pytest.mark.parametrize("stage", STAGES)
def test_a_rerun_from_a_stage_drops_what_it_and_every_later_stage_own(stage: str) -> None:
    later = STAGES[STAGES.index(stage):]
    assert set(sections_from(stage)) == {n for n, o in SECTION_OWNER.items() if o.stage in later}


def test_a_stage_may_write_only_what_it_owns_or_is_declared_to_update() -> None:
    assert sections_written_by("U4") == ("raw_hits", "retrieval_trace", "retrieval_retry_request")
    assert sections_written_by("U6") == ("doclist_trace", "retrieval_retry_request", "coverage_gap",
                                         "clarification", "resume")

    @stage_adapter("U5")
    def rogue(ctx: RunDocument, env: StageEnv) -> StageResult:
        return StageResult({"gate_decision": GateDecision(expand=False, reason="x", support_level="weak"),
                            "draft": None})

    with pytest.raises(StageWroteForeignSection, match="U5 wrote \\['draft'\\]"):
        rogue({}, typing.cast(StageEnv, None))
    assert set(RUNNERS) == set(STAGES)


def test_the_shell_writes_sections_in_the_stored_format_it_always_had() -> None:
    decision = GateDecision(expand=False, reason="exact_article_found", support_level="strong")
    assert apply({}, write={"gate_decision": decision})["gate_decision"] == dump(decision) == {
        "expand": False, "reason": "exact_article_found", "support_level": "strong", "top_score": 0.0,
        "covered_goals": 0, "total_goals": 0}
