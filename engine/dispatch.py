"""Send a stage to its worker. The decision to run a stage is an outbox row written in the caller's transaction;
the task is sent by name only after that transaction commits, and a failed send leaves the row for the reaper.
In the embedded mode tasks run in-process: a trampoline runs them one after another instead of nesting twelve
stages deep in the call stack, and no outbox row is kept (nothing can be lost between two function calls).

The stage shell on PostgreSQL writes the next stage's outbox row inside its persist statement (engine/store.py) and
sends it with ``send_decided``; the row's sent mark then rides on this process's next claim statement instead of
costing a round trip between a stage and the next; a process with no next claim writes them itself
OUTBOX_SENT_MARK_DELAY_S later, from a timer thread. A mark lost with its process (killed right after a send)
costs at most one needless re-send by the reaper, which the claim ignores."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

from celery import current_app
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from engine.models import OutboxMessage
from engine.specs import spec

logger = logging.getLogger(__name__)
_local = threading.local()
# The embedded mode's executor (engine.shell.execute_stage), wired by engine/apps.py when Django starts: the
# dispatcher is imported by the shell and must not import it back.
_eager_executor: Callable[[str, str, int], None] | None = None
# Outbox ids this process sent whose sent mark waits for its next claim (``take_sent_marks``) or the idle timer,
# each with when it was handed over (time.monotonic). A stage worker persists once per claim, so this holds one id
# or two between claims.
_sent_marks: list[tuple[int, float]] = []
_sent_marks_lock = threading.Lock()
_sent_marks_timer: threading.Timer | None = None
# Whether this process claims stages (``take_sent_marks`` is the claim's): a web process never does, so nothing
# carries its marks but the timer, which then takes every waiting mark, not only the due ones. Left to the due
# ones, a web process under load re-armed its timer for the next young mark every few milliseconds, each time on a
# new database connection: every request of the process was ~40 % slower (make bench, session 28).
_claims_here = False


def set_eager_executor(execute: Callable[[str, str, int], None]) -> None:
    global _eager_executor  # one process-wide wiring, set once at start-up
    _eager_executor = execute


def send(run_id: str, stage: str, attempt: int) -> None:
    """Hand one stage task to the broker, by name (the dispatcher does not import the tasks)."""
    current_app.send_task(spec(stage).task_name, args=[run_id, stage, attempt], queue=spec(stage).queue)


def _sent_or_noted(run_id: str, stage: str, attempt: int) -> bool:
    """Send; a broker error is logged and noted on the outbox row, left for the reaper. True when sent."""
    try:
        send(run_id, stage, attempt)
    except Exception as exc:  # the broker is down or refused: the row stays unsent, the reaper retries it
        logger.warning("stage not sent; the reaper will send it", extra={
            "run_id": run_id, "stage": stage, "attempt": attempt, "error": f"{type(exc).__name__}: {exc}"[:300]})
        _row(run_id, stage, attempt).update(last_error=f"{type(exc).__name__}: {exc}"[:300])
        return False
    return True


def send_recorded(run_id: str, stage: str, attempt: int) -> bool:
    """Send and mark the outbox row sent; a broker error is logged and left for the reaper. True when sent."""
    if not _sent_or_noted(run_id, stage, attempt):
        return False
    _row(run_id, stage, attempt).update(sent_at=timezone.now(), sends=F("sends") + 1,
                                                         last_error="")
    return True


def take_sent_marks(limit: int | None = None) -> list[int]:
    """The ids waiting for their sent mark (the oldest ``limit`` of them), handed to the caller's statement
    (``give_back_sent_marks`` if it fails); the rest wait for the next claim or the timer."""
    global _claims_here  # set once: this process claims, its next claim carries the marks
    _claims_here = True
    with _sent_marks_lock:
        taken = _sent_marks[:limit]
        del _sent_marks[:limit]
    return [outbox_id for outbox_id, _ in taken]


def give_back_sent_marks(marks: list[int]) -> None:
    """Marks to write with the next claim, or by the timer if no claim comes first."""
    with _sent_marks_lock:
        now = time.monotonic()
        _sent_marks.extend((outbox_id, now) for outbox_id in marks)
        _arm_timer(settings.OUTBOX_SENT_MARK_DELAY_S)


def _arm_timer(delay_s: float) -> None:
    """One timer per process (the caller holds the lock)."""
    global _sent_marks_timer  # restarted only when none is waiting
    if _sent_marks_timer is None or not _sent_marks_timer.is_alive():
        _sent_marks_timer = threading.Timer(delay_s, _write_idle_sent_marks)
        _sent_marks_timer.daemon = True  # a process that exits leaves its marks to the reaper
        _sent_marks_timer.start()


def _take_due_marks() -> list[int]:
    """The marks handed over at least OUTBOX_SENT_MARK_DELAY_S ago; a younger one stays for the next claim, the
    timer armed again for when it comes due. A busy worker's claims take every mark within milliseconds, so the
    timer finds none due and opens no connection: before, it took whatever mark was waiting when it fired (a
    send a moment old included) and wrote it on a new connection every few seconds, in the middle of stages."""
    global _sent_marks_timer  # this timer has fired: the next arm starts a new one
    delay_s = settings.OUTBOX_SENT_MARK_DELAY_S if _claims_here else 0.0  # no claim here: every mark is due
    with _sent_marks_lock:
        _sent_marks_timer = None
        now = time.monotonic()
        due = [outbox_id for outbox_id, at in _sent_marks if now - at >= delay_s]
        _sent_marks[:] = [(outbox_id, at) for outbox_id, at in _sent_marks if now - at < delay_s]
        if _sent_marks:
            _arm_timer(max(min(at for _, at in _sent_marks) + delay_s - now, 0.001))
    return due


def _write_idle_sent_marks() -> None:
    """The timer: no claim took these marks in OUTBOX_SENT_MARK_DELAY_S. Its own connection (Django's are per
    thread), closed after, so an idle worker holds none open for it."""
    marks = _take_due_marks()
    if not marks:
        return
    try:
        OutboxMessage.objects.filter(id__in=marks).update(sent_at=timezone.now(), sends=F("sends") + 1,
                                                          last_error="")
    except Exception as exc:  # the database is away: the reaper sends these again, the claim ignores the copy
        logger.warning("sent marks not written", extra={"ids": marks, "error": f"{type(exc).__name__}: {exc}"[:300]})
    finally:
        connection.close()


def _send_marking_later(run_id: str, stage: str, attempt: int, outbox_id: int) -> None:
    if _sent_or_noted(run_id, stage, attempt):
        give_back_sent_marks([outbox_id])


def _row(run_id: str, stage: str, attempt: int) -> QuerySet[OutboxMessage]:
    return OutboxMessage.objects.filter(run_id=run_id, stage=stage, attempt=attempt)


def _eager_run(fn: Callable[[], None]) -> None:
    pending: deque[Callable[[], None]] | None = getattr(_local, "pending", None)
    if pending is not None:  # already draining: queue it behind the current stage
        pending.append(fn)
        return
    _local.pending = pending = deque([fn])
    try:
        while pending:
            pending.popleft()()
    finally:
        _local.pending = None


def records_outbox() -> bool:
    """False in the embedded mode: stages run in-process and no outbox row is kept."""
    return not settings.CELERY_TASK_ALWAYS_EAGER


def _run_eagerly_on_commit(run_id: str, stage: str, attempt: int) -> None:
    execute = _eager_executor
    if execute is None:
        raise RuntimeError("the engine app is not ready: no in-process executor (engine/apps.py wires it)")
    transaction.on_commit(lambda: _eager_run(lambda: execute(run_id, stage, attempt)))


def send_decided(run_id: str, stage: str, attempt: int, outbox_id: int | None) -> None:
    """The caller's statement wrote the stage's outbox row (``outbox_id``; None: it existed already): send it once
    that commits, its sent mark deferred to this process's next claim."""
    if not records_outbox():
        _run_eagerly_on_commit(run_id, stage, attempt)
        return
    if outbox_id is None:
        transaction.on_commit(lambda: send_recorded(run_id, stage, attempt))
        return
    transaction.on_commit(lambda: _send_marking_later(run_id, stage, attempt, outbox_id))


def send_after_commit(run_id: str, stage: str, attempt: int) -> None:
    """The caller's statement wrote the stage's outbox row: send it once that commits and mark it sent, as
    ``enqueue_stage`` does after writing the row itself."""
    transaction.on_commit(lambda: send_recorded(run_id, stage, attempt))


def enqueue_stage(run_id: str, stage: str, attempt: int) -> None:
    """Call inside the transaction that persisted the decision; the task is sent only if it commits."""
    if not records_outbox():
        _run_eagerly_on_commit(run_id, stage, attempt)
        return
    # One INSERT (no savepoint, no read): a row that exists already is the same decision, recorded once.
    OutboxMessage.objects.bulk_create([OutboxMessage(run_id=run_id, stage=stage, attempt=attempt,
                                                     queue=spec(stage).queue)], ignore_conflicts=True)
    send_after_commit(run_id, stage, attempt)
