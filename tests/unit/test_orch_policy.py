"""ORCH policy (orch/policy.py): after every stage one pure function decides what runs next.

One table, one row per rule: given the finished stage and the RunContext document, when ORCH decides,
then the action (and, where the rule says so, the sections it masks or resets) is the expected one."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest
from pydantic import BaseModel

from orch.policy import (
    ASK_CLARIFICATION,
    CLARIFICATION_ANSWERED,
    DONE,
    FAIL,
    Limits,
    OrchInput,
    decide,
)
from pipeline.context import RunDocument
from pipeline.contracts import (
    AssembledPrompt,
    CitationCheck,
    Draft,
    EvidenceAssembly,
    GateDecision,
    LawSourceRef,
    RetrievalRetryRequest,
    VerifyResult,
)
from pipeline.document import DOWNSTREAM_OF_RETRIEVAL, WRITER_ARTIFACTS, dump

STAMP = "2025-01-01T00:00:00+00:00"
LIMITS = Limits(max_steps=40, u6_retry_max=1, u11_write_retry_max=1)  # U11_DIRECT_WRITE_RETRY_MAX=1


class Expect(NamedTuple):
    action: str
    mask: tuple[str, ...] = ()
    reset: tuple[str, ...] = ()
    reason_has: str | None = None
    write: dict[str, dict[str, Any]] | None = None  # sections the decision settles: {name: fields it must have}


def doc(**sections: BaseModel | dict[str, Any]) -> dict[str, Any]:
    """A RunContext document as the DB holds it: each section serialised with ``pipeline.document.dump``."""
    return {name: s if isinstance(s, dict) else dump(s) for name, s in sections.items()}


def run(stage: str | None, document: dict[str, Any] | None = None, *, attempts: dict[str, int] | None = None,
        steps: int = 5) -> OrchInput:
    return OrchInput(finished_stage=stage, document=document or {}, attempts=attempts or {stage or "": 1},
                     steps=steps, limits=LIMITS)


def gate(expand: bool, reason: str) -> GateDecision:
    return GateDecision(expand=expand, reason=reason, support_level="partial" if expand else "strong")


def retry(state: str, attempt: int = 1, reason: str = "named_article_missing") -> RetrievalRetryRequest:
    return RetrievalRetryRequest(state=state, reason=reason, seeded_queries=["звільнення"],
                                 attempt=attempt, max=LIMITS.u6_retry_max, requested_at=STAMP, updated_at=STAMP)


def verified(verdict: str) -> VerifyResult:
    status = "supported" if verdict == "complete" else "not_in_evidence"
    return VerifyResult(verdict=verdict, citations=[CitationCheck(article_ref="КЗпП ст. 36", status=status)])


# Downstream artifacts that look finished ("ready") — a pending retrieval retry must not trust them.
READY_DOWNSTREAM = {
    "evidence_assembly": EvidenceAssembly(items=[], support_level="strong"),
    "assembled_prompt": AssembledPrompt(meta={"mode": "law"}, budget={"law_chars": 0},
                                        law_source_refs=[LawSourceRef(article_ref="КЗпП ст. 36", r2_key="k", score=1)]),
    "draft": Draft(text="КЗпП ст. 36", citations=[], provider="offline", model="m", attempt=1),
    "verify_result": verified("complete"),
}

LINEAR_STEPS = [("U1", "U2"), ("U2", "U3"), ("U3", "U4"), ("U4", "U5"),
                ("U7", "U8"), ("U8", "U9"), ("U9", "U10"), ("U10", "U11")]

ORCH_RULES = [
    pytest.param(run(None), Expect("RUN_U1", reason_has="new run"), id="new-run-starts-at-U1"),
    *(pytest.param(run(done), Expect(f"RUN_{nxt}"), id=f"linear-{done}-then-{nxt}") for done, nxt in LINEAR_STEPS),
    # U5 gate
    pytest.param(run("U5", doc(gate_decision=gate(False, "exact_article_found"))), Expect("RUN_U7"),
                 id="U5-gate-satisfied-skips-recovery"),
    pytest.param(run("U5", doc(gate_decision=gate(True, "no_hits"))), Expect("RUN_U6", reason_has="no_hits"),
                 id="U5-gate-expands-to-recovery"),
    pytest.param(run("U5", {}), Expect("RUN_U6", reason_has="fail-safe"), id="U5-gate-missing-fails-safe-to-U6"),
    pytest.param(run("U5", doc(gate_decision={"expand": "maybe", "reason": "no_hits", "support_level": "none"})),
                 Expect("RUN_U6", reason_has="fail-safe"), id="U5-gate-corrupt-fails-safe-to-U6"),
    # U6 recovery and the pending retrieval retry
    pytest.param(run("U6", doc(retrieval_retry_request=retry("pending"))),
                 Expect("RUN_U4", mask=DOWNSTREAM_OF_RETRIEVAL), id="U6-retry-pending-reruns-U4-masking-downstream"),
    *(pytest.param(run(stage, doc(retrieval_retry_request=retry("pending"), **READY_DOWNSTREAM)),
                   Expect("RUN_U4", mask=DOWNSTREAM_OF_RETRIEVAL),
                   id=f"{stage}-pending-retry-beats-ready-downstream-artifacts")
      for stage in ("U7", "U8", "U9", "U10", "U11")),
    pytest.param(run("U6", doc(retrieval_retry_request=retry("pending", attempt=LIMITS.u6_retry_max + 1),
                               gate_decision=gate(True, "named_article_missing"))),
                 Expect("RUN_U7", mask=DOWNSTREAM_OF_RETRIEVAL, reason_has="bound",
                        write={"retrieval_retry_request": {"state": "exhausted", "attempt": LIMITS.u6_retry_max},
                               "gate_decision": {"support_level": "weak"}}),
                 id="retry-over-its-bound-is-exhausted-and-forwards-to-U7-with-weak-support"),
    *(pytest.param(run(stage, doc(retrieval_retry_request=retry("pending", attempt=LIMITS.u6_retry_max + 1),
                                  gate_decision=GateDecision(expand=True, reason="r", support_level="none"))),
                   Expect("RUN_U7", mask=DOWNSTREAM_OF_RETRIEVAL, reason_has="bound",
                          write={"retrieval_retry_request": {"state": "exhausted"}}),
                   id=f"{stage}-retry-over-its-bound-is-exhausted-support-none-stays-none")
      for stage in ("U7", "U11")),
    # DocList unreachable (seed 002): a direct retry through U4 (DocList is asked again by the next U6), then
    # forward with the gap declared
    pytest.param(run("U6", doc(retrieval_retry_request=retry("pending", reason="doclist_unavailable"))),
                 Expect("RUN_U4", mask=DOWNSTREAM_OF_RETRIEVAL, reason_has="doclist_unavailable"),
                 id="U6-doclist-unavailable-retries-directly-through-U4"),
    pytest.param(run("U6", doc(retrieval_retry_request=retry("exhausted", reason="doclist_unavailable"))),
                 Expect("RUN_U7"), id="U6-doclist-still-unavailable-forwards-to-U7"),
    pytest.param(run("U6", doc(retrieval_retry_request=retry("deferred"))), Expect(ASK_CLARIFICATION),
                 id="U6-deferred-asks-for-clarification"),
    pytest.param(run("U6", doc(retrieval_retry_request=retry("exhausted"))), Expect("RUN_U7"),
                 id="U6-retry-exhausted-forwards-to-U7"),
    pytest.param(run("U6", doc(retrieval_retry_request=retry("applied"))), Expect("RUN_U7"),
                 id="U6-retry-applied-forwards-to-U7"),
    pytest.param(run("U6", {}), Expect("RUN_U7"), id="U6-no-retry-forwards-to-U7"),
    # U11 verify
    pytest.param(run("U11", doc(verify_result=verified("complete"))), Expect("RUN_U12"),
                 id="U11-complete-delivers"),
    pytest.param(run("U11", doc(verify_result=verified("retry_write")), attempts={"U10": 1, "U11": 1}),
                 Expect("RUN_U10", reset=WRITER_ARTIFACTS), id="U11-retry-write-rewrites-once-resetting-writer"),
    pytest.param(run("U11", doc(verify_result=verified("retry_write")), attempts={"U10": 2, "U11": 2}),
                 Expect("RUN_U12", reason_has="exhausted"), id="U11-retry-write-used-up-delivers-anyway"),
    pytest.param(run("U11", {}), Expect(FAIL, reason_has="verify_result missing"),
                 id="U11-verify-result-missing-fails"),
    pytest.param(run("U11", doc(verify_result=verified("fail"))), Expect(FAIL), id="U11-verdict-fail-fails"),
    # terminal and guards
    pytest.param(run("U12"), Expect(DONE), id="U12-done"),
    pytest.param(run("U3", steps=LIMITS.max_steps), Expect(FAIL, reason_has="RUN_MAX_STEPS"),
                 id="step-cap-reached-fails"),
    pytest.param(run("U13"), Expect(FAIL, reason_has="no rule"), id="unknown-stage-fails"),
    pytest.param(run(CLARIFICATION_ANSWERED, doc(raw_hits={"hits": []})), Expect("RUN_U7", reason_has="resume from U7"),
                 id="clarification-answered-resumes-from-U7-keeping-U4-hits"),
    pytest.param(run("U12", steps=LIMITS.max_steps), Expect(DONE), id="U12-at-the-step-cap-is-still-delivered"),
]


@pytest.mark.parametrize(("given", "expected"), ORCH_RULES)
def test_orch_rule_decides_next_action(given: OrchInput, expected: Expect) -> None:
    # given: the finished stage and the document (from the table)
    # when
    decision = decide(given)
    # then
    assert decision.action == expected.action, decision.reason
    assert decision.mask == expected.mask
    assert decision.reset == expected.reset
    written = {name: section.model_dump() for name, section in decision.write.items()}
    assert set(written) == set(expected.write or {})
    for name, fields in (expected.write or {}).items():
        assert {k: written[name][k] for k in fields} == fields
    if expected.reason_has is not None:
        assert expected.reason_has in decision.reason
    assert decision.decided_by == "rule"


@pytest.mark.parametrize(("given", "expected"), ORCH_RULES)
def test_the_rules_read_only_the_sections_they_declare(given: OrchInput, expected: Expect,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """decide parses only POLICY_READS (and the mask): validating the whole document after every stage was engine
    overhead. A rule reading a section it does not declare would decide differently on the whole document."""
    # given the decision on the declared sections
    narrowed = decide(given)
    # when the policy sees the whole document instead
    monkeypatch.setattr(RunDocument, "parse_only", classmethod(lambda cls, raw, names: cls.parse(raw)))
    # then it decides the same
    assert decide(given) == narrowed


def test_the_rules_leave_a_choice_only_where_both_branches_are_safe() -> None:
    # given a gate satisfied with partial support, and a write retry with retries left
    partial = decide(run("U5", doc(gate_decision=GateDecision(expand=False, reason="ok", support_level="partial"))))
    strong = decide(run("U5", doc(gate_decision=gate(False, "exact_article_found"))))
    rewrite = decide(run("U11", doc(verify_result=verified("retry_write")), attempts={"U10": 1, "U11": 1}))
    pending = decide(run("U6", doc(retrieval_retry_request=retry("pending"))))

    # then the canary may consult a model only for the first and the third; a pending retry is never optional
    assert (partial.action, partial.alternatives) == ("RUN_U7", ("RUN_U6",))
    assert strong.alternatives == ()
    assert (rewrite.action, rewrite.alternatives) == ("RUN_U10", ("RUN_U12",))
    assert pending.alternatives == ()
