"""The RunContext document as one typed model: a field per section, beside the stage that owns it, plus masking,
resume and lineage. The database keeps the same JSON (``RunContext.document``); ``RunDocument.parse`` reads it and
``dump`` gives it back unchanged, so old documents load and nothing is rewritten by reading.

Ownership is declared here and only here (``Owner`` on each section): a re-run from a stage drops what that stage
and every later one own, ORCH masks what the stages after retrieval own, and a stage adapter may write only the
sections its stage owns or is declared to update."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from pipeline.contracts import (
    Answer,
    AssembledPrompt,
    Clarification,
    CoverageGap,
    DoclistTrace,
    Draft,
    EvidenceAssembly,
    GateDecision,
    Intake,
    LegalReasoning,
    QueryProfile,
    RawHits,
    RetrievalRetryRequest,
    RetrievalTrace,
    SearchPlan,
    Section,
    VerifyResult,
)

MASKED = "_masked"
STAGE_ORDER = ("U1", "U2", "U3", "U4", "U5", "U6", "U7", "U8", "U9", "U10", "U11", "U12")
LINEAGE_KEYS = ("superseded_by", "rerun_of")


@dataclass(frozen=True)
class Owner:
    """The stage whose run produces a section (a re-run from it recomputes the section), and the stages declared
    to update it in passing: U4 marks the retry it ran ``applied``."""

    stage: str
    also_written_by: tuple[str, ...] = ()


class Resume(Section):
    """Where ORCH resumed a run after the user answered its clarification (seed 001: from U7)."""

    action: str
    reason: str
    decided_by: str


class RerunOf(Section):
    run: str
    from_stage: str


class RunDocument(BaseModel):
    """Sections in stage order. A masked section keeps its data here (it is stale, not gone); ``visible()`` is
    what a stage may read. A section that fails its contract reads as absent and is kept verbatim for ``dump``."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    intake: Annotated[Intake | None, Owner("U1")] = None
    query_profile: Annotated[QueryProfile | None, Owner("U2")] = None
    search_plan: Annotated[SearchPlan | None, Owner("U3")] = None
    raw_hits: Annotated[RawHits | None, Owner("U4")] = None
    retrieval_trace: Annotated[RetrievalTrace | None, Owner("U4")] = None
    gate_decision: Annotated[GateDecision | None, Owner("U5")] = None
    doclist_trace: Annotated[DoclistTrace | None, Owner("U6")] = None
    retrieval_retry_request: Annotated[RetrievalRetryRequest | None, Owner("U6", also_written_by=("U4",))] = None
    # U6 declares the gap and asks the question; the user's answer updates both (runs/services.py) and records
    # where the run resumed: all three are U6's, gone when a re-run starts at or before U6.
    coverage_gap: Annotated[CoverageGap | None, Owner("U6")] = None
    clarification: Annotated[Clarification | None, Owner("U6")] = None
    resume: Annotated[Resume | None, Owner("U6")] = None
    evidence_assembly: Annotated[EvidenceAssembly | None, Owner("U7")] = None
    legal_reasoning: Annotated[LegalReasoning | None, Owner("U8")] = None
    assembled_prompt: Annotated[AssembledPrompt | None, Owner("U9")] = None
    draft: Annotated[Draft | None, Owner("U10")] = None
    verify_result: Annotated[VerifyResult | None, Owner("U11")] = None
    answer: Annotated[Answer | None, Owner("U12")] = None

    masked: list[str] = Field(default_factory=list, alias=MASKED)
    superseded_by: str | None = None  # the re-run that replaced this run
    rerun_of: RerunOf | None = None  # the run this one re-runs, and from which stage

    _corrupt: dict[str, object] = PrivateAttr(default_factory=dict)

    @classmethod
    def parse(cls, raw: Mapping[str, object]) -> RunDocument:
        """The stored document, typed. Never raises for a bad entry: it reads as absent and is kept for ``dump``."""
        data, corrupt = dict(raw), {}
        while True:
            try:
                doc = cls.model_validate(data)
                break
            except ValidationError as exc:
                bad = {str(e["loc"][0]) for e in exc.errors() if e["loc"]} & set(data)
                if not bad:
                    raise
                corrupt.update({name: data.pop(name) for name in bad})
        doc._corrupt = corrupt
        return doc

    @classmethod
    def parse_only(cls, raw: Mapping[str, object], names: tuple[str, ...]) -> RunDocument:
        """The named sections (and the mask) of the stored document, typed; the rest read as absent. For readers of
        a few sections after every stage (ORCH's policy): validating the whole ~28 KB document cost ~0.1 ms a
        stage of the engine's own time (make bench). Never to be dumped: what was not read would be lost."""
        return cls.parse({name: raw[name] for name in (*names, MASKED) if name in raw})

    def dump(self) -> dict[str, object]:
        """The JSON the database holds: exactly the entries that were parsed, corrupt ones included."""
        return {**self.model_dump(mode="json", by_alias=True, exclude_unset=True), **self._corrupt}

    def visible(self) -> RunDocument:
        """The document as a stage reads it: masked sections absent (stale after a retrieval retry, seed 001).
        For reading only — its dump would lose the masked data."""
        hidden = {name: None for name in self.masked if name in SECTION_TYPES}
        return self.model_copy(update=hidden) if hidden else self

    @property
    def corrupt(self) -> Mapping[str, object]:
        return self._corrupt


def _owners() -> dict[str, Owner]:
    out: dict[str, Owner] = {}
    for name, info in RunDocument.model_fields.items():
        owner = next((m for m in info.metadata if isinstance(m, Owner)), None)
        if owner is not None:
            out[name] = owner
    return out


SECTION_OWNER: Mapping[str, Owner] = _owners()


def _section_type(name: str) -> type[BaseModel]:
    annotation = RunDocument.model_fields[name].annotation
    kind = next(a for a in getattr(annotation, "__args__", ()) if isinstance(a, type) and issubclass(a, BaseModel))
    return kind


SECTION_TYPES: Mapping[str, type[BaseModel]] = {name: _section_type(name) for name in SECTION_OWNER}


def sections_owned_by(*stages: str) -> tuple[str, ...]:
    """The sections the stages own, in stage order: what re-running them recomputes."""
    return tuple(name for name, owner in SECTION_OWNER.items() if owner.stage in stages)


def sections_written_by(stage: str) -> tuple[str, ...]:
    """What a stage may write: the sections it owns and those it is declared to update."""
    return tuple(name for name, o in SECTION_OWNER.items() if o.stage == stage or stage in o.also_written_by)


def sections_from(stage: str) -> tuple[str, ...]:
    """What a re-run starting at ``stage`` drops: that stage's sections and every later stage's."""
    return sections_owned_by(*STAGE_ORDER[STAGE_ORDER.index(stage):])
