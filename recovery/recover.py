"""U6 Recovery: DocList resolution of the acts the question names, coverage-gap honesty, ambiguity deferral,
and bounded seeded reruns of U4 (seeds 001, 002). Pure: DocList answers arrive as data."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pipeline.contracts import (
    ACT_FOUND_AND_INDEXED,
    ACT_FOUND_IN_CATALOG_NOT_INDEXED,
    ACT_NOT_CHECKED_DOCLIST_UNAVAILABLE,
    ACT_NOT_FOUND_IN_CATALOG,
    AMBIGUOUS_ACT_MATCH,
    DOCLIST_UNAVAILABLE,
    Clarification,
    ClarificationOption,
    CoverageGap,
    DoclistTrace,
    GapAct,
    GateDecision,
    QueryProfile,
    Resolution,
    ResolutionCandidate,
    RetrievalRetryRequest,
)

RETRYABLE = frozenset({"no_hits", "retrieval_error", "named_article_missing", "named_act_not_in_hits",
                       "too_few_hits", "act_unresolved"})


@dataclass(frozen=True)
class RecoveryOutcome:
    doclist_trace: DoclistTrace
    retrieval_retry_request: RetrievalRetryRequest | None
    coverage_gap: CoverageGap | None
    clarification: Clarification | None
    note: str


def _cue_rows(profile: QueryProfile) -> list[Resolution]:
    """The acts U2 bound, recorded as DocList would have answered them, beside what DocList said of the rest."""
    return [Resolution(query=c.matched, reason=ACT_FOUND_AND_INDEXED if c.indexed else ACT_FOUND_IN_CATALOG_NOT_INDEXED,
                       candidates=[ResolutionCandidate(nreg=c.nreg, title=c.title, indexed=c.indexed)])
            for c in profile.act_hints]


def _unanswerable_choice(row: Resolution) -> bool:
    """An ambiguous name none of whose acts the base indexes («закон про освіту»: the 1991 and the 2017 law): asking
    which one costs the user a turn and ends in the same coverage gap, so the gap is declared at once."""
    return row.reason == AMBIGUOUS_ACT_MATCH and bool(row.candidates) and not any(c.indexed for c in row.candidates)


def _gap(cue_rows: list[Resolution], resolutions: Sequence[Resolution]) -> tuple[CoverageGap | None, list[str]]:
    """The coverage gap (acts the catalog lacks or LLDBI does not index), and the indexed acts DocList found for
    a phrase (hints for a rerun)."""
    gap_acts: list[GapAct] = []
    gap_reason = ""
    found_hints: list[str] = []
    for row, asked_doclist in [*((r, False) for r in cue_rows), *((r, True) for r in resolutions)]:
        first = row.candidates[0] if row.candidates else None
        if first and any(a.nreg == first.nreg or (first.title and a.title == first.title) for a in gap_acts):
            continue  # the same act named twice (abbreviation and title), or namesakes («Про освіту» of 1991 and 2017)
        if row.reason == ACT_FOUND_IN_CATALOG_NOT_INDEXED and first:
            gap_acts.append(GapAct(nreg=first.nreg, title=first.title or first.nreg))
            gap_reason = ACT_FOUND_IN_CATALOG_NOT_INDEXED
        elif row.reason == ACT_NOT_FOUND_IN_CATALOG:
            gap_acts.append(GapAct(nreg="", title=row.query))
            gap_reason = gap_reason or ACT_NOT_FOUND_IN_CATALOG
        elif _unanswerable_choice(row) and first:
            # every act the name may mean is outside the base: whichever the user picks, the answer says so
            one_title = len({c.title for c in row.candidates}) == 1
            gap_acts.append(GapAct(nreg=first.nreg if one_title else "",
                                   title=(first.title or first.nreg) if one_title else row.query))
            gap_reason = ACT_FOUND_IN_CATALOG_NOT_INDEXED
        elif row.reason == ACT_FOUND_AND_INDEXED and first and asked_doclist:
            found_hints.append(first.nreg)
    return (CoverageGap(reason=gap_reason, acts=gap_acts) if gap_acts else None), found_hints


def _ask(ambiguous: Resolution, trace: DoclistTrace, gap: CoverageGap | None,
         previous: RetrievalRetryRequest | None, retry_max: int, max_options: int, stamp: str) -> RecoveryOutcome:
    """Ambiguity deferral (seed 001): retrying retrieval before the user says which act wastes tokens."""
    options = [ClarificationOption(nreg=c.nreg, title=c.title, label=c.label, indexed=c.indexed)
               for c in ambiguous.candidates[:max_options]]
    asked = Clarification(reason=AMBIGUOUS_ACT_MATCH, about=ambiguous.query, options=options, asked_at=stamp,
                          question=f"Уточніть, будь ласка, який акт ви маєте на увазі під «{ambiguous.query}»: "
                          + "; ".join(f"{o.label} ({o.title})" for o in options) + ".")
    deferred = RetrievalRetryRequest(state="deferred", reason=AMBIGUOUS_ACT_MATCH, attempt=previous.attempt
                                     if previous else 0, max=retry_max, requested_at=stamp, updated_at=stamp)
    return RecoveryOutcome(trace, deferred, gap, asked, "ambiguity_deferred")


def _rerun(reason: str, profile: QueryProfile, found_hints: list[str], attempt: int, retry_max: int,
           stamp: str) -> RetrievalRetryRequest:
    """Seeded rerun: the question's content words alone (drops framing that dilutes BM25) plus the acts DocList
    found; a direct retry after a transient failure keeps the cues as they were."""
    seeded = [] if reason == "retrieval_error" else [" ".join(profile.keywords)]
    hints = list(dict.fromkeys([c.nreg for c in profile.act_hints if c.indexed] + found_hints))
    return RetrievalRetryRequest(
        state="pending", reason=reason, seeded_queries=[q for q in seeded if q.strip()],
        act_hints=hints, attempt=attempt, max=retry_max, requested_at=stamp, updated_at=stamp)


def recover(*, gate_decision: GateDecision | None, profile: QueryProfile, previous: RetrievalRetryRequest | None,
            resolutions: Sequence[Resolution], clarification: Clarification | None, retry_max: int,
            max_options: int, now: datetime) -> RecoveryOutcome:
    stamp = now.isoformat()
    if gate_decision is None:
        return RecoveryOutcome(DoclistTrace(note="gate_decision missing or corrupt: forwarded (fail-safe)"),
                               previous, None, None, "fail_safe_forward")
    cue_rows = _cue_rows(profile)
    trace = DoclistTrace(resolutions=[*cue_rows, *resolutions])
    gap, found_hints = _gap(cue_rows, resolutions)

    ambiguous = next((r for r in resolutions if r.reason == AMBIGUOUS_ACT_MATCH and r.candidates
                      and not _unanswerable_choice(r)), None)
    answered = clarification is not None and clarification.answer_nreg is not None
    if ambiguous is not None and not answered:
        return _ask(ambiguous, trace, gap, previous, retry_max, max_options, stamp)

    attempt = (previous.attempt if previous else 0) + 1
    unchecked = [r for r in resolutions if r.reason == DOCLIST_UNAVAILABLE]
    if unchecked:
        return _doclist_unavailable(trace, profile, previous, unchecked, gap, found_hints, attempt, retry_max, stamp)
    if gate_decision.reason not in RETRYABLE and not found_hints:
        return RecoveryOutcome(trace, previous, gap, None, "no_retry_for_reason")
    if gate_decision.reason == "act_unresolved" and not found_hints:
        return RecoveryOutcome(trace, previous, gap, None, "nothing_to_retry_with")
    if attempt > retry_max:
        exhausted = RetrievalRetryRequest(
            state="exhausted", reason=gate_decision.reason, attempt=attempt - 1, max=retry_max,
            seeded_queries=previous.seeded_queries if previous else [],
            requested_at=previous.requested_at if previous else stamp, updated_at=stamp)
        return RecoveryOutcome(trace, exhausted, gap, None, "retry_exhausted")
    request = _rerun(gate_decision.reason, profile, found_hints, attempt, retry_max, stamp)
    return RecoveryOutcome(trace, request, gap, None, "retry_requested")


def gap_for_answer(chosen: ClarificationOption, gap: CoverageGap | None) -> CoverageGap | None:
    """The coverage gap once the user has picked an act (seed 002 coverage-gap honesty). An act the catalog knows
    but LLDBI does not index joins the gap: bound to it, U7 keeps none of U4's hits, and the answer must say the
    act could not be consulted instead of delivering nothing with no reason."""
    if chosen.indexed:
        return gap
    acts = list(gap.acts) if gap else []
    if not any(a.nreg.lower() == chosen.nreg.lower() for a in acts):
        acts.append(GapAct(nreg=chosen.nreg, title=chosen.title or chosen.label))
    return CoverageGap(reason=ACT_FOUND_IN_CATALOG_NOT_INDEXED, acts=acts)


def _doclist_unavailable(trace: DoclistTrace, profile: QueryProfile,
                         previous: RetrievalRetryRequest | None, unchecked: Sequence[Resolution],
                         gap: CoverageGap | None, found_hints: list[str], attempt: int, retry_max: int,
                         stamp: str) -> RecoveryOutcome:
    """DocList did not answer (seed 002: a cold or timed-out worker). First a direct retry — back to U4 with the
    cues as they were, so the next U6 asks DocList again — within U6_DIRECT_RETRY_MAX; then forward with the
    phrase declared as a gap of its own reason, so the answer says the act could not be checked."""
    hints = list(dict.fromkeys([c.nreg for c in profile.act_hints if c.indexed] + found_hints))
    if attempt <= retry_max:
        request = RetrievalRetryRequest(state="pending", reason="doclist_unavailable", act_hints=hints,
                                        attempt=attempt, max=retry_max, requested_at=stamp, updated_at=stamp)
        return RecoveryOutcome(trace, request, gap, None, "doclist_unavailable_retry")
    acts = list(gap.acts) if gap else []
    for r in unchecked:
        if not any(a.title == r.query for a in acts):
            acts.append(GapAct(nreg="", title=r.query, reason=ACT_NOT_CHECKED_DOCLIST_UNAVAILABLE))
    declared = CoverageGap(reason=gap.reason if gap and gap.reason else ACT_NOT_CHECKED_DOCLIST_UNAVAILABLE,
                           acts=acts)
    exhausted = RetrievalRetryRequest(
        state="exhausted", reason="doclist_unavailable", attempt=attempt - 1, max=retry_max, act_hints=hints,
        requested_at=previous.requested_at if previous else stamp, updated_at=stamp)
    return RecoveryOutcome(trace, exhausted, declared, None, "doclist_unavailable_forwarded")
