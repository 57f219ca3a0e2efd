"""Celery's task router (settings CELERY_TASK_ROUTES): a stage task goes to its stage's queue."""

from __future__ import annotations

from typing import Any

from engine.specs import STAGE_SPECS, TASK_PREFIX


def route_task(name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **_: Any) -> dict[str, str] | None:
    if name.startswith(TASK_PREFIX):
        stage = STAGE_SPECS.get(name[len(TASK_PREFIX):])
        if stage is not None:
            return {"queue": stage.queue}
    return None
