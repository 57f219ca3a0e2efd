"""ORCH under random stage outcomes (hypothesis): every run ends in a terminal or waiting state, within every cap,
and no stage is ever started on an artifact that is missing or masked as stale."""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from orch.policy import ASK_CLARIFICATION, DONE, FAIL, Limits, OrchInput, decide
from pipeline.document import MASKED, apply

# What each stage reads (engine/runners.py): these must be present and unmasked when ORCH starts the stage.
REQUIRES: dict[str, tuple[str, ...]] = {
    "U1": (), "U2": ("intake",), "U3": ("intake", "query_profile"), "U4": ("search_plan",),
    "U5": ("query_profile", "raw_hits"), "U6": ("query_profile",), "U7": ("raw_hits",),
    "U8": ("query_profile", "evidence_assembly"), "U9": ("evidence_assembly", "query_profile", "search_plan"),
    "U10": ("assembled_prompt", "intake"), "U11": ("draft", "assembled_prompt"), "U12": ("draft", "verify_result"),
}
NOW = "2026-01-01T00:00:00+00:00"


def _raw(name: str, data: st.DataObject, doc: dict[str, Any]) -> dict[str, Any]:
    """A plausible serialized section; the contents ORCH reads are drawn at random."""
    if name == "gate_decision":
        if data.draw(st.booleans(), label="gate corrupt"):
            return {"expand": "maybe"}
        return {"expand": data.draw(st.booleans(), label="expand"), "reason": "r",
                "support_level": data.draw(st.sampled_from(["strong", "partial", "weak", "none"]))}
    if name == "verify_result":
        return {"verdict": data.draw(st.sampled_from(["complete", "retry_write", "fail"]), label="verdict"),
                "citations": []}
    return {"stub": True}


def _run_stage(stage: str, doc: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    writes: dict[str, Any] = {}
    produces = {"U1": ["intake"], "U2": ["query_profile"], "U3": ["search_plan"], "U4": ["raw_hits"],
                "U5": ["gate_decision"], "U7": ["evidence_assembly"], "U8": ["legal_reasoning"],
                "U9": ["assembled_prompt"], "U10": ["draft"], "U11": ["verify_result"], "U12": ["answer"]}
    for name in produces.get(stage, []):
        if stage == "U5" and data.draw(st.booleans(), label="gate missing"):
            continue
        writes[name] = _raw(name, data, doc)
    retry = doc.get("retrieval_retry_request")
    if stage == "U4" and retry and retry.get("state") == "pending":
        writes["retrieval_retry_request"] = {**retry, "state": "applied"}
    if stage == "U6":
        state = data.draw(st.sampled_from(["pending", "exhausted", "deferred", "none"]), label="U6 outcome")
        if state != "none":
            attempt = (retry or {}).get("attempt", 0) + (1 if state == "pending" else 0)
            writes["retrieval_retry_request"] = {"state": state, "reason": "r", "attempt": attempt, "max": 1,
                                                 "requested_at": NOW, "updated_at": NOW}
    out = dict(doc)
    out.update(writes)
    out[MASKED] = [m for m in doc.get(MASKED, []) if m not in writes]
    return out


def steps_the_caps_allow(u6_max: int, u11_max: int) -> int:
    """The longest legitimate walk: U1–U3, every retrieval cycle (U4, U5, U6), U7–U9 once, every write (U10,
    U11), U12. A walk longer than this looped, even if RUN_MAX_STEPS ended it."""
    return 3 + 3 * (1 + u6_max) + 3 + 2 * (1 + u11_max) + 1


@settings(max_examples=300, deadline=None)
@given(data=st.data(), max_steps=st.integers(min_value=3, max_value=60),
       u6_max=st.integers(min_value=0, max_value=3), u11_max=st.integers(min_value=0, max_value=3))
def test_random_runs_end_within_their_caps_and_never_read_a_masked_artifact(data, max_steps, u6_max, u11_max):
    limits = Limits(max_steps=max_steps, u6_retry_max=u6_max, u11_write_retry_max=u11_max)
    doc: dict[str, Any] = {}
    attempts: Counter[str] = Counter()
    finished: str | None = None
    for _ in range(max_steps + 2):  # the cap itself must end the walk: one more turn proves it
        decision = decide(OrchInput(finished_stage=finished, document=doc, attempts=attempts,
                                    steps=sum(attempts.values()), limits=limits))
        if decision.action in (DONE, FAIL, ASK_CLARIFICATION):
            break
        doc = apply(doc, write=decision.write, mask=decision.mask, reset=decision.reset)
        stage = decision.next_stage
        assert stage is not None
        stale = set(doc.get(MASKED, []))
        for name in REQUIRES[stage]:
            assert name in doc and name not in stale, f"{stage} started without fresh {name}: {decision}"
        doc = _run_stage(stage, doc, data)
        attempts[stage] += 1
        finished = stage
    else:
        raise AssertionError("ORCH never ended the run")
    assert sum(attempts.values()) <= min(max_steps, steps_the_caps_allow(u6_max, u11_max)), dict(attempts)
    if max_steps > steps_the_caps_allow(u6_max, u11_max):  # the step cap is a guard, never the way a run ends
        assert not (decision.action == FAIL and "RUN_MAX_STEPS" in decision.reason), dict(attempts)
    assert attempts["U4"] <= 1 + u6_max
    assert attempts["U10"] <= 1 + u11_max
