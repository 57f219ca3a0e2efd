"""A run of the demo question stopped before a stage, on the real broker, for tests that drive the distributed stage
shell one stage at a time in this process."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis

from engine import dispatch
from engine.entry import rerun_document
from runs.models import Run, RunContext
from runs.services import run_create
from tenancy.models import Specialist

QUESTION = "Скільки календарних днів триває щорічна основна відпустка?"
BROKER_URL = os.environ.get("E2E_BROKER_URL", "redis://127.0.0.1:6379/14")


@contextmanager
def run_at(stage: str, specialist: Specialist, settings: Any) -> Iterator[Run]:
    """A run of the question, done in-process, re-run from ``stage`` with sends going to the real broker (where no
    worker listens: the test executes each stage itself). Afterwards the broker is emptied and this process's
    sent marks dropped, so nothing of the test is left for the idle timer."""
    done = run_create(org=specialist.org, specialist=specialist, question=QUESTION)
    document = rerun_document(RunContext.objects.get(run=done).document, old_run_id=str(done.pk), stage=stage)
    run = Run.objects.create(org=done.org, specialist=specialist, question=QUESTION, flags=dict(done.flags),
                             limits=dict(done.limits), status=Run.Status.RUNNING)
    RunContext.objects.create(run=run, document=document)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = BROKER_URL
    from lexery.celery import app

    app.conf.broker_url = BROKER_URL
    try:
        yield run
    finally:
        redis.Redis.from_url(BROKER_URL).flushdb()
        app.conf.broker_url = "memory://localhost/"
        dispatch.take_sent_marks()
