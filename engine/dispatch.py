"""Send a stage to its worker. The decision to run a stage is an outbox row written in the caller's transaction;
the task is sent by name only after that transaction commits, and a failed send leaves the row for the reaper.
In the embedded mode tasks run in-process: a trampoline runs them one after another instead of nesting twelve
stages deep in the call stack, and no outbox row is kept (nothing can be lost between two function calls)."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from engine.models import OutboxMessage
from engine.specs import spec

logger = logging.getLogger(__name__)
_local = threading.local()


def send(run_id: str, stage: str, attempt: int) -> None:
    """Hand one stage task to the broker, by name (the dispatcher does not import the tasks)."""
    current_app.send_task(spec(stage).task_name, args=[run_id, stage, attempt], queue=spec(stage).queue)


def send_recorded(run_id: str, stage: str, attempt: int) -> bool:
    """Send and mark the outbox row sent; a broker error is logged and left for the reaper. True when sent."""
    try:
        send(run_id, stage, attempt)
    except Exception as exc:  # the broker is down or refused: the row stays unsent, the reaper retries it
        logger.warning("stage not sent; the reaper will send it", extra={
            "run_id": run_id, "stage": stage, "attempt": attempt, "error": f"{type(exc).__name__}: {exc}"[:300]})
        _row(run_id, stage, attempt).update(last_error=f"{type(exc).__name__}: {exc}"[:300])
        return False
    _row(run_id, stage, attempt).update(sent_at=timezone.now(), sends=F("sends") + 1,
                                                         last_error="")
    return True


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


def enqueue_stage(run_id: str, stage: str, attempt: int) -> None:
    """Call inside the transaction that persisted the decision; the task is sent only if it commits."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        from engine.shell import execute_stage

        transaction.on_commit(lambda: _eager_run(lambda: execute_stage(run_id, stage, attempt)))
        return
    # One INSERT (no savepoint, no read): a row that exists already is the same decision, recorded once.
    OutboxMessage.objects.bulk_create([OutboxMessage(run_id=run_id, stage=stage, attempt=attempt,
                                                     queue=spec(stage).queue)], ignore_conflicts=True)
    transaction.on_commit(lambda: send_recorded(run_id, stage, attempt))
