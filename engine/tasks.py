"""One thin Celery task per stage. Each only names its stage and calls the shared shell; retries of a lost
worker are safe because the shell skips an attempt that already finished."""

from __future__ import annotations

from celery import Task, shared_task

from engine.shell import execute_stage
from orch.policy import STAGES


def _make(stage: str) -> Task:
    @shared_task(name=f"engine.stage.{stage}", acks_late=True, reject_on_worker_lost=True,
                 ignore_result=True)
    def stage_task(run_id: str, stage_name: str, attempt: int) -> None:
        execute_stage(run_id, stage_name, attempt)

    return stage_task  # type: ignore[return-value]


STAGE_TASKS: dict[str, Task] = {stage: _make(stage) for stage in STAGES}
