"""Enqueue the next stage after the transaction commits. In the embedded mode tasks run in-process; a
trampoline runs them one after another instead of nesting twelve stages deep in the call stack."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from django.conf import settings
from django.db import transaction

QUEUE_BY_STAGE = {
    # touch Qdrant: one worker process per local-path store (U7 searches the users' documents)
    "U4": "retrieval", "U6": "retrieval", "U7": "retrieval",
    "U9": "assemble", "U10": "llm", "U11": "llm",
}
DEFAULT_QUEUE = "stages"
ALL_QUEUES = (DEFAULT_QUEUE, "retrieval", "assemble", "llm")

_local = threading.local()


def queue_for(stage: str) -> str:
    return QUEUE_BY_STAGE.get(stage, DEFAULT_QUEUE)


def _send(run_id: str, stage: str, attempt: int) -> None:
    from engine.tasks import STAGE_TASKS

    STAGE_TASKS[stage].apply_async(args=[run_id, stage, attempt], queue=queue_for(stage))


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
        transaction.on_commit(lambda: _eager_run(lambda: _send(run_id, stage, attempt)))
    else:
        transaction.on_commit(lambda: _send(run_id, stage, attempt))
