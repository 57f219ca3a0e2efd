"""U6 Recovery: act resolution for acts the index lacks (coverage gap), and bounded seeded reruns of U4.
Pure: the DocList answers arrive as data in the query profile's act cues."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pipeline.contracts import (
    CoverageGap,
    DoclistTrace,
    GateDecision,
    QueryProfile,
    RetrievalRetryRequest,
)

ACT_FOUND_IN_CATALOG_NOT_INDEXED = "ACT_FOUND_IN_CATALOG_NOT_INDEXED"
ACT_NOT_FOUND_IN_CATALOG = "ACT_NOT_FOUND_IN_CATALOG"
AMBIGUOUS_ACT_MATCH = "AMBIGUOUS_ACT_MATCH"
ACT_FOUND_AND_INDEXED = "ACT_FOUND_AND_INDEXED"

RETRYABLE = frozenset({"no_hits", "retrieval_error", "named_article_missing", "named_act_not_in_hits",
                       "too_few_hits"})


@dataclass(frozen=True)
class RecoveryOutcome:
    doclist_trace: DoclistTrace
    retrieval_retry_request: RetrievalRetryRequest | None
    coverage_gap: CoverageGap | None
    note: str


def recover(*, gate_decision: GateDecision | None, profile: QueryProfile,
            previous: RetrievalRetryRequest | None, retry_max: int, now: datetime) -> RecoveryOutcome:
    stamp = now.isoformat()
    if gate_decision is None:
        return RecoveryOutcome(DoclistTrace(note="gate_decision missing or corrupt: forwarded (fail-safe)"),
                               previous, None, "fail_safe_forward")
    resolutions = [
        {"query": c.matched, "nreg": c.nreg, "title": c.title,
         "reason": ACT_FOUND_AND_INDEXED if c.indexed else ACT_FOUND_IN_CATALOG_NOT_INDEXED}
        for c in profile.act_hints
    ]
    trace = DoclistTrace(resolutions=resolutions)
    missing = [r for r in resolutions if r["reason"] != ACT_FOUND_AND_INDEXED]
    gap = CoverageGap(reason=ACT_FOUND_IN_CATALOG_NOT_INDEXED,
                      acts=[{"nreg": r["nreg"], "title": r["title"]} for r in missing]) if missing else None
    attempt = (previous.attempt if previous else 0) + 1
    if gate_decision.reason not in RETRYABLE:
        return RecoveryOutcome(trace, previous, gap, "no_retry_for_reason")
    if attempt > retry_max:
        exhausted = RetrievalRetryRequest(
            state="exhausted", reason=gate_decision.reason, attempt=attempt - 1, max=retry_max,
            seeded_queries=previous.seeded_queries if previous else [],
            requested_at=previous.requested_at if previous else stamp, updated_at=stamp)
        return RecoveryOutcome(trace, exhausted, gap, "retry_exhausted")
    # Seeded rerun: the question's content words alone (drops question framing that dilutes BM25), and the
    # indexed acts it names as hints; direct retry on a transient failure keeps the cues as they were.
    seeded = [] if gate_decision.reason == "retrieval_error" else [" ".join(profile.keywords)]
    request = RetrievalRetryRequest(
        state="pending", reason=gate_decision.reason, seeded_queries=[q for q in seeded if q.strip()],
        act_hints=[c.nreg for c in profile.act_hints if c.indexed], attempt=attempt, max=retry_max,
        requested_at=stamp, updated_at=stamp)
    return RecoveryOutcome(trace, request, gap, "retry_requested")
