"""One thin Celery task per stage, declared from the stage specs table: name, queue, time limits and retry policy
in one place. Each only names its stage and calls the shared shell; a redelivered or re-sent task is safe because
the shell claims (run, stage, attempt) and skips an attempt that already finished."""

from __future__ import annotations

from celery import Task, shared_task
from django.conf import settings

from engine.reaper import reap
from engine.shell import TRANSIENT, execute_stage
from engine.specs import STAGE_SPECS, StageSpec

# TRANSIENT: a database or broker that blinked; the task runs again from its claim (bounded, with backoff). Anything
# else inside a stage, its persist included, is the stage's failure and is recorded on the run by the shell.


def _make(stage_spec: StageSpec) -> Task:
    @shared_task(name=stage_spec.task_name, acks_late=True, reject_on_worker_lost=True, ignore_result=True,
                 soft_time_limit=stage_spec.soft_limit_s, time_limit=stage_spec.hard_limit_s,
                 autoretry_for=TRANSIENT, max_retries=settings.STAGE_TRANSIENT_RETRY_MAX,
                 retry_backoff=1, retry_backoff_max=30, retry_jitter=True)
    def stage_task(run_id: str, stage_name: str, attempt: int) -> None:
        execute_stage(run_id, stage_name, attempt)

    return stage_task


STAGE_TASKS: dict[str, Task] = {stage: _make(s) for stage, s in STAGE_SPECS.items()}


@shared_task(name="engine.reap", ignore_result=True, acks_late=True, time_limit=120, soft_time_limit=100)
def reap_task() -> None:
    """Beat, every REAPER_INTERVAL_S: send what was never sent, re-send what stalled, fail what cannot finish."""
    reap()
