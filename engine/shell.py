"""The one shell every stage task runs: load, guard, call the stage, persist section + event in one
transaction, ask ORCH, enqueue the next stage on commit. Idempotent per (run, stage, attempt)."""

from __future__ import annotations

import logging
import time
from collections import Counter
from contextlib import nullcontext
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection, transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from engine import dispatch, store
from engine.dispatch import enqueue_stage
from engine.held import after_written, run_held, stored_outcome
from engine.runners import RUNNERS
from engine.specs import spec
from engine.stage_env import injected_delay, limits, run_limits, stage_env
from engine.store import CLAIM_EVENT_FIELDS, Claim
from lexery.logging import bind_run
from llm.gateway import LlmGateway
from llm.types import ProviderError
from orch import canary
from orch.policy import ASK_CLARIFICATION, DONE, FAIL, Decision, OrchInput, decide
from pipeline.document import apply
from runs.models import Run, RunContext, StageEvent
from runs.selectors import run_spend_caps

logger = logging.getLogger(__name__)


class ContextConflict(Exception):
    """The document changed while the stage computed: another writer raced this one."""


class StageOutputRefused(Exception):
    """The database refused to store a stage's result: a value it cannot hold (NUL in a JSON or text value, which a
    model's answer can carry; a lone surrogate; a string past its column), a broken constraint, a statement it
    rejects. Storing the same result again fails again, so the run fails now with this reason instead of the
    exception leaving the task and the run staying ``running`` until the reaper gives up on it."""


# A database or broker that blinked: the task runs again from its claim (engine/tasks.py: bounded, with backoff).
# Any other database error while a stage persists is the stage's failure (StageOutputRefused).
TRANSIENT = (OperationalError, InterfaceError, BrokerError)


def _begin(run_id: str, stage: str, attempt: int) -> Claim | None:
    """Claim (run, stage, attempt). None when there is nothing to do: done already, the run has ended, another
    delivery holds the attempt, or this attempt was delivered too often (then the run fails with that reason).
    On PostgreSQL a first delivery is one statement (engine/store.py); anything else takes the locked path."""
    if store.fast():
        marks = dispatch.take_sent_marks(settings.CLAIM_SENT_MARKS_MAX)
        try:
            claimed = store.claim(run_id, stage, attempt, timezone.now(), marks)
        except Exception:
            dispatch.give_back_sent_marks(marks)
            raise
        if claimed is not None:
            if not claimed.run.limits:  # the run's first stage: its bounds, written with this stage's persist
                claimed.run.limits = run_limits(claimed.run)
                claimed.limits_unrecorded = True
            return claimed
    return _begin_locked(run_id, stage, attempt)


def _begin_locked(run_id: str, stage: str, attempt: int) -> Claim | None:
    with transaction.atomic():
        # One round trip: the run locked (against a cancel or a second claim), its specialist, and the document
        # the stage computes on (its version is checked again when the stage persists).
        snapshot = (RunContext.objects.select_for_update(of=("run",)).select_related("run", "run__specialist")
                    .get(run_id=run_id))
        run = snapshot.run
        if run.status in (*Run.TERMINAL, Run.Status.AWAITING_CLARIFICATION):
            logger.info("run not runnable; stage skipped", extra={"status": run.status})
            return None
        now = timezone.now()
        # A run has a few dozen events at most (RUN_MAX_STEPS); their details (JSON, read on every claim of every
        # stage) are not needed here: the profile (bench/stage_profile.py) showed them parsed for nothing.
        events = list(StageEvent.objects.filter(run=run).only(*CLAIM_EVENT_FIELDS))
        attempts = Counter(e.stage for e in events)
        event = next((e for e in events if e.stage == stage and e.attempt == attempt), None)
        if event is not None and not _reclaim(run, event, now):
            return None
        if event is None:
            run.steps += 1
            event = StageEvent.objects.create(run=run, stage=stage, attempt=attempt, step=run.steps,
                                              started_at=now, claimed_at=now)
            attempts[stage] += 1
        if run.status == Run.Status.QUEUED:
            run.status, run.started_at = Run.Status.RUNNING, now
        if not run.limits:  # the bounds this run lives under, visible on the run
            run.limits = run_limits(run)
        run.current_stage = stage
        run.save(update_fields=["steps", "status", "started_at", "current_stage", "limits", "updated_at"])
        return Claim(run, event, snapshot, attempts)


def _reclaim(run: Run, event: StageEvent, now: datetime) -> bool:
    """A second delivery of an attempt already claimed (under the run's row lock). True: this delivery runs it."""
    if event.outcome != StageEvent.Outcome.RUNNING:
        logger.info("stage attempt already finished; redelivery ignored")
        return False
    stage_spec = spec(event.stage)
    held_since = event.claimed_at or event.started_at
    if (now - held_since).total_seconds() < stage_spec.hard_limit_s:
        # The first delivery may still be computing (a broker that redelivers on a dropped connection, a re-send
        # racing a slow stage): two copies would compute twice and bill the model twice. The reaper re-sends the
        # attempt if its holder never finishes.
        logger.info("stage attempt held by another delivery; this one leaves it", extra={"attempt": event.attempt})
        return False
    if event.deliveries > stage_spec.max_redeliveries:
        reason = (f"{event.stage} attempt {event.attempt} was delivered {event.deliveries} times without finishing "
                  f"(STAGE_MAX_REDELIVERIES={stage_spec.max_redeliveries})")
        logger.error("stage delivered too often; the run fails", extra={"deliveries": event.deliveries})
        _finish_event(event, StageEvent.Outcome.ERROR, None, Decision(FAIL, reason), {"error": reason})
        _apply_decision(run, Decision(FAIL, reason))
        return False
    event.deliveries += 1
    event.claimed_at = now
    event.save(update_fields=["deliveries", "claimed_at"])
    logger.warning("stage attempt redelivered; running it again", extra={"deliveries": event.deliveries})
    return True


def _finish_event(event: StageEvent, outcome: str, started: float | None, decision: Decision | None,
                  detail: dict[str, object], compute_ms: int | None = None) -> None:
    event.outcome = outcome
    event.finished_at = timezone.now()
    if started is not None:  # None: finished by the engine without this process running it
        event.duration_ms = round((time.monotonic() - started) * 1000)
    event.compute_ms = compute_ms
    if decision is not None:
        event.next_action, event.decided_by, event.reason = decision.action, decision.decided_by, decision.reason[:300]
    event.detail = detail
    event.save(update_fields=["outcome", "finished_at", "duration_ms", "compute_ms", "next_action", "decided_by",
                              "reason", "detail"])


def _apply_decision(run: Run, decision: Decision, attempts: Counter[str] | None = None) -> None:
    """Send the next stage (its attempt numbered from ``attempts``, the counts ORCH decided on, when given) or
    end the run. Inside the transaction that persisted the decision."""
    stage = decision.next_stage
    if stage is not None:
        done = attempts[stage] if attempts is not None else StageEvent.objects.filter(run=run, stage=stage).count()
        enqueue_stage(str(run.id), stage, done + 1)
        return
    run.finished_at = timezone.now()
    if decision.action == DONE:
        run.status = Run.Status.DONE
    elif decision.action == ASK_CLARIFICATION:
        run.status, run.finished_at = Run.Status.AWAITING_CLARIFICATION, None
    elif decision.action == FAIL:
        run.status, run.error = Run.Status.FAILED, decision.reason
    run.save(update_fields=["status", "error", "finished_at", "updated_at"])


def _canary(decision: Decision, document: dict[str, Any], run: Run, event: StageEvent) -> Decision:
    """Rules decide obvious branches; a hard one with a real choice asks the cheap or premium ORCH model."""
    if not decision.alternatives:
        return decision
    level = canary.difficulty(document)
    if level == "obvious":
        return decision
    model = settings.ORCH_PREMIUM_MODEL if level == "complex" else settings.ORCH_CHEAP_MODEL
    try:
        reply = LlmGateway(str(run.id), event.stage, event.attempt, caps=run_spend_caps(run=run),
                           delivery=event.deliveries).complete(
            role="orch", model=model, messages=canary.orch_messages(decision, document),
            max_tokens=canary.ORCH_MAX_TOKENS)
    except ProviderError:
        logger.warning("ORCH model failed; the rule decides", extra={"model": model})
        return decision
    chosen = canary.pick(decision, reply.text)
    return replace(chosen, decided_by="premium" if level == "complex" else "cheap", alternatives=())


def execute_stage(run_id: str, stage: str, attempt: int) -> None:
    with bind_run(run_id, stage):
        held = run_held(run_id, stage, attempt)  # the document this process holds: one statement (engine/held.py)
        if held.done:
            return
        if isinstance(held.failure, TRANSIENT):
            raise held.failure  # the task's bounded retry; nothing was claimed
        claimed = _begin(run_id, stage, attempt)
        if claimed is None:
            return
        if held.failure is not None and claimed.snapshot.version == held.version:
            # The stage raised on this very document: recorded as the claimed path records it, not computed again.
            logger.error("stage failed", exc_info=held.failure)
            _fail(run_id, claimed.event, stage, held.started, held.failure)
            return
        run, event, snapshot = claimed.run, claimed.event, claimed.snapshot
        started = time.monotonic()
        conflicts = 0
        while True:
            try:
                decision = _compute_and_persist(run, event, snapshot, claimed.attempts, started, conflicts,
                                                limits_unrecorded=claimed.limits_unrecorded)
            except ContextConflict as exc:
                # Another writer moved the document while this stage computed (a re-run from an earlier stage,
                # an answered clarification, a second delivery of this very task). Never overwrite it.
                event.refresh_from_db()
                if event.outcome != StageEvent.Outcome.RUNNING:
                    logger.info("a second delivery finished this attempt first; this one persists nothing")
                    return
                conflicts += 1
                snapshot = RunContext.objects.get(run_id=run_id)
                if conflicts > settings.STAGE_CONFLICT_RETRY_MAX:
                    _fail(run_id, event, stage, started, exc)
                    return
                logger.warning("RunContext changed during the stage; recomputing on the new document",
                               extra={"error": str(exc), "conflicts": conflicts})
                continue
            except TRANSIENT:
                _release(event)
                raise  # the task's bounded retry (engine/tasks.py)
            except StageOutputRefused as exc:
                cause = exc.__cause__
                logger.error("the database refused the stage's result; the run fails", exc_info=cause, extra={
                    "error_type": type(cause).__name__, "sqlstate": getattr(getattr(cause, "__cause__", None),
                                                                            "sqlstate", None)})
                _fail(run_id, event, stage, started, exc)
                return
            break
        if decision is not None:
            logger.info("stage done", extra={"next": decision.action, "reason": decision.reason,
                                             "duration_ms": event.duration_ms})


def _release(event: StageEvent) -> None:
    """After a database or broker blink while this delivery computed or persisted, nothing of the stage was stored:
    its claim is dated back past the stage's hard limit so that the task's own retry (seconds later) takes the
    attempt again — a delivery that still held it found it held and left it to the reaper, a hard limit and its grace
    later. Only this delivery's claim (the same ``claimed_at``, still running) is released; the retry counts as a
    delivery (STAGE_MAX_REDELIVERIES). Best effort: with the database still down the reaper recovers it, as before."""
    expired = event.claimed_at or event.started_at
    try:
        if not connection.in_atomic_block and not connection.is_usable():
            connection.close()  # the next query opens a new connection
        with transaction.atomic():
            released = StageEvent.objects.filter(
                pk=event.pk, outcome=StageEvent.Outcome.RUNNING, claimed_at=event.claimed_at,
            ).update(claimed_at=expired - timedelta(seconds=spec(event.stage).hard_limit_s))
    except DatabaseError:
        logger.warning("the stage's claim could not be released; the reaper will send it again")
        return
    if released:
        logger.warning("transient error; the stage's claim is released for the task's retry")


def _storable(text: str) -> str:
    """An exception's text as the database stores it: it may quote the very value that was refused (a NUL, a lone
    surrogate), and the failure that records it must not be refused in turn."""
    return text.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


def _fail(run_id: str, event: StageEvent, stage: str, started: float, exc: Exception) -> None:
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run_id)
        decision = Decision(FAIL, _storable(f"{stage} failed: {type(exc).__name__}: {exc}")[:300])
        _finish_event(event, StageEvent.Outcome.ERROR, started, decision, {"error": _storable(str(exc))[:1000]})
        if not run.is_terminal:
            if not run.limits:  # failed in the run's first stage, before its persist could record them
                run.limits = run_limits(run)
                run.save(update_fields=["limits", "updated_at"])
            _apply_decision(run, decision)


def _compute_and_persist(run: Run, event: StageEvent, snapshot: RunContext, attempts: Counter[str],
                         started: float, conflicts: int, limits_unrecorded: bool = False) -> Decision | None:
    """One computation of the stage on ``snapshot``, persisted only if the document has not moved since it was
    read (else ContextConflict). None when nothing was persisted (the stage failed, or the run ended).
    compute_ms counts the stage's own code and a model ORCH consults: work, not the engine's machinery."""
    run_id, stage, attempt = str(run.pk), event.stage, event.attempt
    try:
        env = stage_env(run, stage, attempt, timezone.now(), event.deliveries)  # the engine's work: not compute
        computing = time.monotonic()
        injected_delay(stage)
        result = RUNNERS[stage](snapshot.document, env)
        compute_s = time.monotonic() - computing
    except TRANSIENT:
        raise  # a database or broker blink while the stage read what it needs is not the stage's failure: retried
    except Exception as exc:
        logger.exception("stage failed")
        _fail(run_id, event, stage, started, exc)
        return None
    # Decide before taking the locks: a model consulted for a hard branch must not hold row locks.
    document = apply(snapshot.document, write=result.write)
    decision = decide(OrchInput(finished_stage=stage, document=document, attempts=attempts,
                                steps=run.steps, limits=limits()))
    consulting = time.monotonic()
    decision = _canary(decision, document, run, event)
    if decision.decided_by != "rule":
        compute_s += time.monotonic() - consulting
    # Rounded once, as duration_ms is: truncating each part would count ~0.5 ms a stage of work as overhead.
    compute_ms = round(compute_s * 1000)
    after = apply(document, write=decision.write, mask=decision.mask, reset=decision.reset)
    detail = {**result.detail, "context_conflicts": conflicts} if conflicts else result.detail
    try:
        return _persist(run, event, snapshot, after, decision, attempts, started, compute_ms, detail,
                        flags=dict(result.detail.get("flags", {})) if stage == "U1" else None,
                        limits_unrecorded=limits_unrecorded)
    except TRANSIENT:
        raise  # the task's bounded retry (engine/tasks.py)
    except (DatabaseError, UnicodeEncodeError) as exc:  # psycopg encodes text itself: a lone surrogate is not a
        # DataError but fails before the statement is sent
        raise StageOutputRefused(f"the database refused to store {stage}'s result: {type(exc).__name__}: "
                                 f"{exc}") from exc


def _persist(run: Run, event: StageEvent, snapshot: RunContext, after: dict[str, Any], decision: Decision,
             attempts: Counter[str], started: float, compute_ms: int, detail: dict[str, Any],
             flags: dict[str, Any] | None, limits_unrecorded: bool) -> Decision | None:
    """The stage's sections, its event and ORCH's decision, all or nothing: nothing is written when the database
    refuses any of it."""
    run_id, stage = str(run.pk), event.stage
    if store.fast():
        changes: dict[str, object] = {"flags": flags} if flags is not None else {}
        if limits_unrecorded:
            changes["limits"] = run.limits
        # One statement, atomic on its own. Inside a caller's transaction (a stage run in-process by a request or a
        # test) a savepoint keeps a refused statement from aborting the caller's transaction with it, so the run
        # can still be failed there.
        with transaction.atomic() if connection.in_atomic_block else nullcontext():
            return _persist_fast(run, event, snapshot, after, decision, attempts, started, compute_ms, detail,
                                 changes)
    with transaction.atomic():
        # One round trip locks both rows (the run against a cancel, the context against another writer) without
        # loading the document again: only its version is compared.
        ctx = (RunContext.objects.select_for_update().select_related("run")
               .only("version", "run__id", "run__status").get(run_id=run_id))
        if ctx.version != snapshot.version:
            raise ContextConflict(f"RunContext moved from v{snapshot.version} to v{ctx.version} during {stage}")
        locked = ctx.run
        if locked.is_terminal:  # cancelled while computing: keep nothing, decide nothing
            _finish_event(event, StageEvent.Outcome.SKIPPED, started, None, {"why": f"run {locked.status}"})
            return None
        ctx.document = after
        ctx.version += 1
        ctx.save(update_fields=["document", "version", "updated_at"])
        if flags is not None:
            locked.flags = flags
            locked.save(update_fields=["flags", "updated_at"])
        _finish_event(event, StageEvent.Outcome.OK, started, decision, detail, compute_ms)
        _apply_decision(locked, decision, attempts)
    return decision


def _persist_fast(run: Run, event: StageEvent, snapshot: RunContext, after: dict[str, Any], decision: Decision,
                  attempts: Counter[str], started: float, compute_ms: int, detail: dict[str, Any],
                  changes: dict[str, object]) -> Decision | None:
    """The same persist as the ORM path, as one statement (engine/store.py), the next stage sent once it is
    written."""
    now = timezone.now()
    finish, next_stage, ended = stored_outcome(decision, attempts, started, compute_ms, detail, now)
    changes.update(ended)
    persisted = store.persist(run_id=str(run.pk), event_id=event.pk, version=snapshot.version,
                              before=snapshot.document, after=after, finish=finish, run_changes=changes,
                              next_stage=next_stage if dispatch.records_outbox() else None, now=now)
    if persisted.version != snapshot.version:
        raise ContextConflict(f"RunContext moved from v{snapshot.version} to v{persisted.version} "
                              f"during {event.stage}")
    if persisted.status in Run.TERMINAL:  # cancelled while computing: keep nothing, decide nothing
        _finish_event(event, StageEvent.Outcome.SKIPPED, started, None, {"why": f"run {persisted.status}"})
        return None
    for name in ("outcome", "finished_at", "duration_ms", "compute_ms", "next_action", "decided_by", "reason",
                 "detail"):
        setattr(event, name, getattr(finish, name))
    after_written(run, changes, attempts, next_stage, persisted.outbox_id)
    return decision
