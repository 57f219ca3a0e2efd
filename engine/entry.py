"""The engine's three entry points. Everything outside the engine starts, resumes or re-runs a run through these;
each must be called inside the caller's transaction, and the first stage is sent only if that transaction commits
(engine/dispatch.py: an outbox row, sent after commit, re-sent by the reaper if the send fails)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.db import transaction
from pydantic import BaseModel

from engine import dispatch, store
from engine.dispatch import enqueue_stage
from engine.specs import spec
from engine.stage_env import limits
from orch.policy import CLARIFICATION_ANSWERED, STAGES, Decision, OrchInput, decide
from pipeline.context import LINEAGE_KEYS, sections_from
from pipeline.document import MASKED, apply
from runs.models import Run, RunContext, StageEvent


class NotResumable(Exception):
    """ORCH did not resume the run after an answer: the caller reports it and rolls back."""


def run_open(*, run: Run) -> None:
    """Store a new run (``run`` unsaved) with an empty context and send U1 once that commits: on PostgreSQL with a
    broker one statement (engine/store.py ``open_run``), its sent mark written later in a batch (a POST's second
    round trip and commit, ~0.7 ms, before); otherwise ``Run.objects.create`` and ``run_start`` in one
    transaction."""
    if store.fast() and dispatch.records_outbox():
        stage = "U1"
        outbox_id = store.open_run(run, store.NextStage(stage=stage, attempt=1, queue=spec(stage).queue))
        dispatch.send_decided(str(run.pk), stage, 1, outbox_id)
        return
    with transaction.atomic():
        run.save(force_insert=True)
        run_start(run=run)


def run_start(*, run: Run, document: dict[str, Any] | None = None, stage: str = "U1") -> None:
    """Create the run's context (empty, or seeded by a re-run) and send ``stage`` after commit."""
    RunContext.objects.create(run=run, document=document or {})
    enqueue_stage(str(run.pk), stage, 1)


def run_resume(*, run: Run, ctx: RunContext, write: dict[str, BaseModel | None]) -> Decision:
    """The user answered the clarification ORCH asked: persist the answer, ask ORCH where to resume (seed 001: from
    U7, keeping U4's hits), mark the run running and send that stage. ``run`` and ``ctx`` are locked by the caller."""
    attempts = Counter(StageEvent.objects.filter(run=run).values_list("stage", flat=True))
    decision = decide(OrchInput(finished_stage=CLARIFICATION_ANSWERED, document=ctx.document, attempts=attempts,
                                steps=run.steps, limits=limits()))
    stage = decision.next_stage
    if stage is None:
        raise NotResumable(f"ORCH did not resume the run: {decision.reason}")
    ctx.document = apply(ctx.document, write=write)
    ctx.document["resume"] = {"action": decision.action, "reason": decision.reason, "decided_by": "rule"}
    ctx.version += 1
    ctx.save(update_fields=["document", "version", "updated_at"])
    run.status = Run.Status.RUNNING
    run.save(update_fields=["status", "updated_at"])
    enqueue_stage(str(run.pk), stage, attempts.get(stage, 0) + 1)
    return decision


def rerun_document(document: dict[str, Any], *, old_run_id: str, stage: str) -> dict[str, Any]:
    """The old run's document without what ``stage`` and every later stage wrote: the new run recomputes those
    instead of trusting stale ones."""
    dropped = set(sections_from(stage)) | set(LINEAGE_KEYS)
    kept = {k: v for k, v in document.items() if k not in dropped and k != MASKED}
    kept[MASKED] = [m for m in document.get(MASKED, []) if m in kept]
    kept["rerun_of"] = {"run": old_run_id, "from_stage": stage}
    return kept


def run_rerun(*, old: Run, old_ctx: RunContext, stage: str) -> Run:
    """A new run (same org, specialist, question and flag snapshot) that starts at ``stage`` with the old run's
    artifacts of the earlier stages; the old run is marked superseded. ``old`` and ``old_ctx`` are locked."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}")
    document = rerun_document(old_ctx.document, old_run_id=str(old.pk), stage=stage)
    # The snapshot travels twice: as overrides (a re-run from U1 resolves to the same flags) and as the snapshot
    # itself (stages after U1 read it directly).
    new = Run.objects.create(org=old.org, specialist=old.specialist, question=old.question,
                             conversation_id=old.conversation_id, user_ref=old.user_ref, flags=dict(old.flags),
                             flag_overrides=dict(old.flags))
    old_ctx.document = {**old_ctx.document, "superseded_by": str(new.pk)}
    old_ctx.version += 1
    old_ctx.save(update_fields=["document", "version", "updated_at"])
    run_start(run=new, document=document, stage=stage)
    return new
