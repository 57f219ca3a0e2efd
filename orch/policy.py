"""ORCH: one pure policy function. After every stage it decides what runs next (DESIGN §3, seeds 001/002).
Obvious branches are decided by rules (the deterministic canary); each decision says who made it and why."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from pipeline.context import STAGE_ORDER, RunDocument
from pipeline.contracts import RetrievalRetryRequest
from pipeline.document import DOWNSTREAM_OF_RETRIEVAL, WRITER_ARTIFACTS

STAGES = STAGE_ORDER
LINEAR = {"U1": "U2", "U2": "U3", "U3": "U4", "U4": "U5", "U7": "U8", "U8": "U9", "U9": "U10", "U10": "U11"}
DONE = "DONE"
FAIL = "FAIL"
ASK_CLARIFICATION = "ASK_CLARIFICATION"
CLARIFICATION_ANSWERED = "CLARIFICATION"  # pseudo-stage: the user answered the question ORCH asked


def run_action(stage: str) -> str:
    return f"RUN_{stage}"


@dataclass(frozen=True)
class Limits:
    max_steps: int
    u6_retry_max: int
    u11_write_retry_max: int


@dataclass(frozen=True)
class OrchInput:
    finished_stage: str | None
    document: Mapping[str, Any]
    attempts: Mapping[str, int]  # how many times each stage has run, the finished one included
    steps: int
    limits: Limits


@dataclass(frozen=True)
class Decision:
    action: str
    reason: str
    decided_by: str = "rule"
    mask: tuple[str, ...] = ()
    reset: tuple[str, ...] = ()
    detail: dict[str, Any] = field(default_factory=dict)
    # Where the rules leave a real choice, the other safe actions; a model may pick one for hard cases.
    alternatives: tuple[str, ...] = ()
    # Sections the decision itself settles (persisted with it): a retry ORCH refuses is marked exhausted, so the
    # same rule cannot fire again after the next stage.
    write: dict[str, BaseModel] = field(default_factory=dict)

    @property
    def next_stage(self) -> str | None:
        return self.action[4:] if self.action.startswith("RUN_") else None


# The sections the rules read (a test holds decide to them: any other section may be corrupt or absent).
POLICY_READS = ("retrieval_retry_request", "gate_decision", "verify_result")


def decide(inp: OrchInput) -> Decision:
    doc = RunDocument.parse_only(inp.document, POLICY_READS).visible()
    if inp.finished_stage == "U12":  # delivered: the cap guards runaway work, not a finished answer
        return Decision(DONE, "answer delivered")
    if inp.steps >= inp.limits.max_steps:
        return Decision(FAIL, f"step cap reached: {inp.steps} stage runs (RUN_MAX_STEPS={inp.limits.max_steps})")
    stage = inp.finished_stage
    if stage is None:
        return Decision(run_action("U1"), "new run")
    retry = doc.retrieval_retry_request
    pending = retry is not None and retry.state == "pending"
    # A pending retrieval retry wins over any "ready" downstream artifact: back to U4, downstream masked.
    if pending and stage in ("U6", "U7", "U8", "U9", "U10", "U11") and retry is not None:
        if retry.attempt > inp.limits.u6_retry_max:
            return _forward_over_bound(doc, retry, inp.limits)
        return Decision(run_action("U4"), f"retrieval retry pending ({retry.reason}, attempt {retry.attempt}"
                        f"/{retry.max})", mask=DOWNSTREAM_OF_RETRIEVAL)
    if stage == CLARIFICATION_ANSWERED:
        # Seed 001: resume from U7 with the chosen act bound, keeping U4's hits: no retrieval rerun.
        return Decision(run_action("U7"), "clarification answered: resume from U7 with the chosen act")
    if stage in LINEAR:
        return Decision(run_action(LINEAR[stage]), f"{stage} done")
    if stage == "U5":
        gate = doc.gate_decision
        if gate is None:
            return Decision(run_action("U6"), "gate_decision missing or corrupt: U6 forwards (fail-safe)")
        if gate.expand:
            return Decision(run_action("U6"), f"gate expands: {gate.reason}")
        if gate.support_level == "partial":  # enough to write, but recovery might still find better evidence
            return Decision(run_action("U7"), f"gate satisfied: {gate.reason}", alternatives=(run_action("U6"),))
        return Decision(run_action("U7"), f"gate satisfied: {gate.reason}")
    if stage == "U6":
        if retry is not None and retry.state == "deferred":
            return Decision(ASK_CLARIFICATION, f"clarification needed before retrieval: {retry.reason}")
        return Decision(run_action("U7"), "recovery finished" + (f" ({retry.state})" if retry else ""))
    if stage == "U11":
        result = doc.verify_result
        if result is None:
            return Decision(FAIL, "verify_result missing after U11")
        if result.verdict == "complete":
            return Decision(run_action("U12"), "verified: every citation is in the evidence")
        if result.verdict == "retry_write":
            writes = inp.attempts.get("U10", 1)
            if writes - 1 < inp.limits.u11_write_retry_max:
                return Decision(run_action("U10"), f"write retry {writes}/{inp.limits.u11_write_retry_max}: "
                                "unsupported citations", reset=WRITER_ARTIFACTS, alternatives=(run_action("U12"),))
            return Decision(run_action("U12"), "write retries exhausted: U12 removes unsupported citations")
        return Decision(FAIL, "verifier failed the draft")
    return Decision(FAIL, f"no rule for finished stage {stage!r}")


def _forward_over_bound(doc: RunDocument, retry: RetrievalRetryRequest, limits: Limits) -> Decision:
    """A pending retry past U6_DIRECT_RETRY_MAX (the bound was lowered mid-run, or a stage wrote past it) is not
    run: it is marked exhausted and the gate's support lowered to weak (seed 002: forward with weak or partial
    support), and U7 rebuilds the evidence from U4's hits. Left pending, the rule would fire after every stage."""
    write: dict[str, BaseModel] = {
        "retrieval_retry_request": retry.model_copy(update={"state": "exhausted", "attempt": retry.attempt - 1})}
    gate = doc.gate_decision
    if gate is not None and gate.support_level in ("strong", "partial"):
        write["gate_decision"] = gate.model_copy(update={"support_level": "weak"})
    return Decision(run_action("U7"), f"retrieval retry over its bound (attempt {retry.attempt}/"
                    f"{limits.u6_retry_max}): exhausted, forwarded with weak support", mask=DOWNSTREAM_OF_RETRIEVAL,
                    write=write)
