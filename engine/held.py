"""A stage computed on the document this process holds, claimed by its own persist: one statement a stage, not two.

A stage worker usually receives the next stage of the run it has just persisted, and still holds that run's
document (engine/store.py ``HeldDocument``). A claim would only tell it what it knows already — the run running at
the steps it wrote, the document at the version it wrote, no event of the new attempt yet — so the stage is computed
first and its persist inserts its event, finished, under the same locks and checks (``store.Unclaimed``). If
anything moved meanwhile (another delivery claimed the attempt, a re-run or an answered clarification wrote the
document, a cancel, a claim of any stage) that statement writes nothing and the delivery takes the claimed path
(engine/shell.py), which computes again on what its claim reads: a pure stage computed twice, never stored twice.

What it gives up: while a held stage computes, the run shows no ``running`` event for it (the event appears when the
stage is stored, finished); ``ENGINE_HELD_STAGES=false`` claims every stage first. What it keeps: a stage that would
reach a model — U10, U9's triage in model mode, ORCH's canary on a hard branch — is claimed first (``ClaimNeeded``),
so a model call is always billed to a claimed delivery; the task's time limits; the next stage's outbox row in the
same statement; the sent marks a claim would have carried. A worker killed while it computes leaves no event: the
redelivered message is claimed by the process that takes it, which holds nothing."""

from __future__ import annotations

import copy
import logging
import time
from collections import Counter
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from engine import dispatch, store
from engine.runners import RUNNERS
from engine.specs import spec
from engine.stage_env import injected_delay, limits, stage_env
from llm.gateway import LlmGateway
from orch import canary
from orch.policy import ASK_CLARIFICATION, DONE, FAIL, Decision, OrchInput, decide
from pipeline.document import apply
from runs.models import Run, StageEvent

logger = logging.getLogger(__name__)


class ClaimNeeded(Exception):
    """A stage computed before its claim reached for the model gateway: it is claimed, then computed again."""


def _claim_first() -> LlmGateway:
    raise ClaimNeeded("a stage that calls a model is claimed before it runs")


@dataclass(frozen=True)
class HeldRun:
    """What the held path did. ``done``: stored (or the message needs nothing more). Otherwise the claimed path
    runs; ``failure`` is what the stage raised on the held document at ``version`` (the claimed path records it
    when its claim reads that same version, instead of computing the failure again)."""

    done: bool
    version: int | None = None
    failure: Exception | None = None
    started: float = 0.0  # time.monotonic() when the held computation began


NOT_HELD = HeldRun(done=False)


def run_held(run_id: str, stage: str, attempt: int) -> HeldRun:
    held = store.held(run_id)
    # Only the very stage this process sent after its own persist: after a stage that ran elsewhere (another queue,
    # another child) the document held is stale, and computing on it would be work thrown away.
    if (not settings.ENGINE_HELD_STAGES or held is None or held.run is None or held.attempts is None
            or held.next != (stage, attempt) or spec(stage).calls_model):
        return NOT_HELD
    run, document, steps = copy.copy(held.run), dict(held.document), held.run.steps
    started_at, started = timezone.now(), time.monotonic()
    try:
        env = stage_env(run, stage, attempt, started_at, gateway=_claim_first)
        computing = time.monotonic()
        injected_delay(stage)
        result = RUNNERS[stage](document, env)
        compute_ms = round((time.monotonic() - computing) * 1000)
    except ClaimNeeded:
        return NOT_HELD
    except Exception as exc:  # the claimed path records it (or re-raises a transient one for the task's retry)
        return HeldRun(done=False, version=held.version, failure=exc, started=started)
    attempts = held.attempts + Counter({stage: 1})
    computed = apply(document, write=result.write)
    decision = decide(OrchInput(finished_stage=stage, document=computed, attempts=attempts, steps=steps + 1,
                                limits=limits()))
    if decision.alternatives and canary.difficulty(computed) != "obvious":
        return NOT_HELD  # ORCH would consult a model: that is billed to a claimed delivery
    after = apply(computed, write=decision.write, mask=decision.mask, reset=decision.reset)
    unclaimed = store.Unclaimed(stage=stage, attempt=attempt, started_at=started_at, steps=steps)
    persisted = _persist(run, unclaimed, held.version, document, after, decision, attempts, started, compute_ms,
                         result.detail)
    if persisted is None:
        return NOT_HELD
    logger.info("stage done", extra={"next": decision.action, "reason": decision.reason, "held": True,
                                     "duration_ms": round((time.monotonic() - started) * 1000)})
    return HeldRun(done=True)


def _persist(run: Run, unclaimed: store.Unclaimed, version: int, document: dict[str, object],
             after: dict[str, object], decision: Decision, attempts: Counter[str], started: float, compute_ms: int,
             detail: dict[str, object]) -> store.Persisted | None:
    """The stage stored with its event, in one statement; None when it wrote nothing (the claimed path follows)."""
    now = timezone.now()
    finish, next_stage, changes = stored_outcome(decision, attempts, started, compute_ms, detail, now)
    # Taken now, not when the stage began: during a long stage the idle timer writes them (OUTBOX_SENT_MARK_DELAY_S).
    marks = dispatch.take_sent_marks(settings.CLAIM_SENT_MARKS_MAX)
    try:
        with transaction.atomic() if connection.in_atomic_block else nullcontext():
            persisted = store.persist(
                run_id=str(run.pk), event_id=None, version=version, before=document, after=after, finish=finish,
                run_changes=changes, next_stage=next_stage if dispatch.records_outbox() else None, now=now,
                unclaimed=replace(unclaimed, sent=marks))
    except (OperationalError, InterfaceError):
        # A blink: the task's retry claims the attempt (its outcome here unknown, this process forgets what it held).
        dispatch.give_back_sent_marks(marks)
        store.drop_held()
        raise
    except (DatabaseError, UnicodeEncodeError):
        # A value the database refuses: the claimed path stores the same result, fails the same way, records why.
        dispatch.give_back_sent_marks(marks)
        store.drop_held()
        return None
    if persisted.event_id is None:
        logger.info("the run moved since this process wrote it; the stage is claimed and computed again",
                    extra={"status": persisted.status, "version": persisted.version})
        return None
    run.steps, run.current_stage = unclaimed.steps + 1, unclaimed.stage
    after_written(run, changes, attempts, next_stage, persisted.outbox_id)
    return persisted


def after_written(run: Run, changes: Mapping[str, object], attempts: Counter[str], next_stage: store.NextStage | None,
                  outbox_id: int | None) -> None:
    """Once a persist wrote the stage: the run as written, held beside its document (the next stage, if this process
    gets it, needs no claim), and the next stage sent after commit."""
    for name, value in changes.items():
        setattr(run, name, value)
    store.keep_run(run, attempts, next_stage)
    if next_stage is not None:
        dispatch.send_decided(str(run.pk), next_stage.stage, next_stage.attempt, outbox_id)


def stored_outcome(decision: Decision, attempts: Counter[str], started: float, compute_ms: int,
                   detail: Mapping[str, object], now: datetime,
                   ) -> tuple[store.EventFinish, store.NextStage | None, dict[str, object]]:
    """What a persist writes of a stage that finished: its event's end, and the next stage's outbox row (numbered
    from the attempts ORCH decided on) or the run's columns as the decision ends it."""
    finish = store.EventFinish(outcome=str(StageEvent.Outcome.OK), finished_at=now,
                               duration_ms=round((time.monotonic() - started) * 1000), compute_ms=compute_ms,
                               next_action=decision.action, decided_by=decision.decided_by,
                               reason=decision.reason[:300], detail=detail)
    if decision.next_stage is None:
        return finish, None, ending(decision, now)
    return finish, store.NextStage(stage=decision.next_stage, attempt=attempts[decision.next_stage] + 1,
                                   queue=spec(decision.next_stage).queue), {}


def ending(decision: Decision, now: datetime) -> dict[str, object]:
    """The run's columns when ``decision`` ends it (or makes it wait for the user)."""
    if decision.action == DONE:
        return {"status": str(Run.Status.DONE), "finished_at": now}
    if decision.action == ASK_CLARIFICATION:
        return {"status": str(Run.Status.AWAITING_CLARIFICATION), "finished_at": None}
    if decision.action == FAIL:
        return {"status": str(Run.Status.FAILED), "error": decision.reason, "finished_at": now}
    return {"finished_at": now}
