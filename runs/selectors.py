"""Reads. ``run_get_for_org`` is the only way the API reaches a run: another org's run does not exist for you."""

from __future__ import annotations

import re
import uuid
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import QuerySet, Sum

from llm.budget import SpendCaps
from llm.models import CostLedgerEntry
from pipeline.context import RunDocument
from runs.models import Run, StageEvent
from tenancy.models import Org
from tenancy.selectors import get_for_org_or_404


def run_get_for_org(*, org: Org, run_id: uuid.UUID | str) -> Run:
    return get_for_org_or_404(Run.objects.select_related("specialist", "context"), org=org, pk=run_id, what="run")


# The ledger's sums a run shows as its cost, by the name ``run_cost`` gives each.
LEDGER_SUMS = {"usd": "cost_usd", "prompt_tokens": "prompt_tokens", "completion_tokens": "completion_tokens",
               "cached_tokens": "cached_tokens"}


def run_detail_get_for_org(*, org: Org, run_id: uuid.UUID | str) -> Run:
    """``run_get_for_org`` with the run's cost summed in the same statement (its ledger joined and grouped by the
    run): the run API shows every run with its cost, and a second round trip for the sums was a third of a GET's
    queries. Measured against the two queries: the same CPU (~3 ms of ORM and SQL); four scalar subqueries instead
    cost ~9 ms, mostly compiling them."""
    runs = Run.objects.select_related("specialist", "context").annotate(
        **{f"ledger_{name}": Sum(f"ledger__{field}") for name, field in LEDGER_SUMS.items()})
    return get_for_org_or_404(runs, org=org, pk=run_id, what="run")


def run_spend_caps(*, run: Run) -> SpendCaps:
    """What the LLM gateway checks this run's calls against: the cap recorded on the run when it started (so a later
    change of the specialist does not move it), else the specialist's, else ``RUN_COST_CAP_USD``; and its org."""
    recorded = (run.limits or {}).get("RUN_COST_CAP_USD")
    if recorded not in (None, "", "None"):
        cap = Decimal(str(recorded))
    elif run.specialist.cost_cap_usd is not None:
        cap = run.specialist.cost_cap_usd
    else:
        cap = Decimal(settings.RUN_COST_CAP_USD)
    return SpendCaps(run_cap_usd=cap, org_id=run.org_id)


def run_events(*, run: Run) -> QuerySet[StageEvent]:
    return run.events.order_by("step", "id")


def run_cost(*, run: Run) -> dict[str, Any]:
    """The run's spend from its ledger: the sums ``run_detail_get_for_org`` read with the run, else one query."""
    if all(hasattr(run, f"ledger_{name}") for name in LEDGER_SUMS):
        agg = {name: getattr(run, f"ledger_{name}") for name in LEDGER_SUMS}
    else:
        agg = CostLedgerEntry.objects.filter(run=run).aggregate(
            **{name: Sum(field) for name, field in LEDGER_SUMS.items()})
    usd = (agg["usd"] or Decimal("0")).quantize(Decimal("0.00000001"))  # SQLite sums to 18 decimal places
    return {"usd": f"{usd:f}", "prompt_tokens": agg["prompt_tokens"] or 0,
            "completion_tokens": agg["completion_tokens"] or 0, "cached_tokens": agg["cached_tokens"] or 0}


def _clarification(ctx: RunDocument) -> dict[str, Any] | None:
    asked = ctx.clarification
    if asked is None:
        return None
    return {"question": asked.question, "reason": asked.reason, "about": asked.about,
            "options": [{"nreg": o.nreg, "label": o.label, "title": o.title} for o in asked.options],
            "answer": asked.answer_nreg, "answered_at": asked.answered_at}


def _evidence(ctx: RunDocument) -> list[dict[str, Any]]:
    evidence = ctx.evidence_assembly
    return [{"rank": i.rank, "source": i.source, "score": i.score, "article_ref": i.article_ref, "label": i.label,
             "heading": i.heading} for i in (evidence.items if evidence else [])]


_STAGE_FAILED = re.compile(r"^(?P<stage>U\d+) failed: (?P<kind>\w+):")
# What a client may know of a failed stage: a stable code and a sentence of ours. The exception's own text (paths,
# SQL, endpoints, keys' prefixes) stays in run.error and the stage event, for the operators (admin, logs).
PUBLIC_FAILURES = {
    "CostCapExceeded": ("cost_cap_exceeded", "{stage}: the run's cost cap was reached before the model was called; "
                                             "nothing more was spent."),
    "ProviderError": ("model_unavailable", "{stage}: the language model did not answer; try again later."),
    "OrgSpendCapExceeded": ("org_spend_cap_exceeded", "{stage}: the organisation's daily model spend cap was "
                                                      "reached; try again tomorrow."),
    "StageOutputRefused": ("stage_output_refused", "{stage}: its result held a value that cannot be stored (such "
                                                   "as a NUL character in a model's answer); the run stopped there "
                                                   "and the operators have the details."),
}


def public_error(error: str) -> tuple[str, str] | None:
    """(code, sentence) of a run's or an event's error for API clients; None when there is none."""
    if not error:
        return None
    failed = _STAGE_FAILED.match(error)
    if failed is None:  # ORCH's own reason (a step cap, an exhausted bound): our words, safe to show
        return "run_failed", error
    code, sentence = PUBLIC_FAILURES.get(failed["kind"], ("stage_failed", "{stage} failed; the operators have "
                                                                          "the details."))
    return code, sentence.format(stage=failed["stage"])


# Stage-event detail keys that hold exception text (a failed stage; U4's failed search steps; U7's failed channels).
INTERNAL_DETAIL_KEYS = frozenset({"error", "errors", "channel_errors"})


def run_events_view(*, run: Run) -> list[dict[str, Any]]:
    """The stage events as clients see them: an error event says which public failure it was, not the exception,
    and exception texts in a detail become their count (``internal_errors``)."""
    events = []
    for e in run_events(run=run):
        row = {f: getattr(e, f) for f in ("step", "stage", "attempt", "outcome", "started_at", "finished_at",
                                          "duration_ms", "next_action", "decided_by", "reason")}
        detail = dict(e.detail or {})
        hidden = [detail.pop(k) for k in INTERNAL_DETAIL_KEYS & set(detail)]
        count = sum(len(h) if isinstance(h, list) else 1 for h in hidden if h)
        if count:
            detail["internal_errors"] = count
        row["detail"] = detail
        if e.outcome == StageEvent.Outcome.ERROR:
            public = public_error(e.reason)
            row["reason"] = public[1] if public else ""
        events.append(row)
    return events


# What a run that no stage has run yet has spent: stages make the model calls the ledger records.
NOTHING_SPENT: dict[str, Any] = {"usd": f"{Decimal('0').quantize(Decimal('0.00000001')):f}", "prompt_tokens": 0,
                                 "completion_tokens": 0, "cached_tokens": 0}


def run_view(*, run: Run, just_created: bool = False) -> dict[str, Any]:
    """The run as clients see it (API and ``ask --json`` print the same object). ``just_created``: the run
    ``run_create`` returned in this request; while it is still queued no stage has run, so its cost is known
    without summing the ledger."""
    doc = run.context.document if hasattr(run, "context") else {}
    ctx = RunDocument.parse(doc).visible()
    answer = ctx.answer
    gap = answer.coverage_gap if answer else None
    return {
        "id": str(run.id),
        "status": run.status,
        "stage": run.current_stage or None,
        "question": run.question,
        "specialist": run.specialist.slug,
        "user_ref": run.user_ref,
        "conversation_id": run.conversation_id,
        "evidence": _evidence(ctx),
        "answer": None if answer is None else {
            "text": answer.text,
            "citations": [{"act_nreg": c.act_nreg, "article": c.article, "article_ref": c.article_ref}
                          for c in answer.citations],
        },
        "support_level": answer.support_level if answer else None,
        "coverage_gap": gap.model_dump() if gap else doc.get("coverage_gap"),
        "clarification": _clarification(ctx),
        "limits": run.limits,
        "error": (public_error(run.error) or (None, None))[1],
        "error_code": (public_error(run.error) or (None, None))[0],
        "cost": dict(NOTHING_SPENT) if just_created and run.status == Run.Status.QUEUED else run_cost(run=run),
        "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
    }
