"""A stage result PostgreSQL refuses, on a real Celery worker (tests/engine/test_persist_refused.py drives the same
shell in-process). The writer's model answers with a NUL character — the real ``openai`` SDK in the worker, over HTTP
to an OpenAI-protocol server on the loopback — and U10's persist is refused (``\\u0000`` in jsonb). Before, the
DataError left the task (the worker logged it as the task's failure), the run stayed ``running`` with its U10 event
open, and only the reaper, past the hard limit and STAGE_MAX_REDELIVERIES re-sends, could end it. Now the worker
fails the run at once, with a code and a sentence."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings
from rest_framework.test import APIClient

from engine.specs import ALL_QUEUES
from runs.models import Run, StageEvent
from tenancy.models import Specialist
from tests.conftest import post_run
from tests.e2e.test_celery_worker import _database_url, _spawn, _stop
from tests.engine.test_persist_refused import NUL_ANSWER, QUESTION
from tests.support.broker import BROKER_URL
from tests.support.openai_server import FakeOpenAIServer

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

POLL_TIMEOUT_S = 180  # a fresh worker loads the search index and the tokenizer; the load of a shared machine


def test_a_worker_fails_the_run_when_postgresql_refuses_the_writers_answer(
        api: APIClient, catalog: Any, specialist: Specialist, broker: redis.Redis, release_qdrant: None) -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the worker shares the test database, and the refusal is PostgreSQL's")
    log = Path(django_settings.VAR_DIR) / "e2e-refused-worker.log"
    with FakeOpenAIServer() as model:
        model.default_behaviour = {"reply": NUL_ANSWER}
        env = {**os.environ, "DATABASE_URL": _database_url(), "CELERY_BROKER_URL": BROKER_URL,
               "LEXERY_VAR_DIR": str(django_settings.VAR_DIR), "LOG_LEVEL": "WARNING", "LLM_PROVIDER": "openai",
               "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "sk-test-not-real"}
        worker = _spawn(["-m", "celery", "-A", "lexery", "worker", "--pool=solo", "-Q", ",".join(ALL_QUEUES),
                         "--without-heartbeat", "--without-gossip", "--without-mingle", "-l", "WARNING"],
                        env, log.name)
        try:
            created = post_run(api, question=QUESTION, specialist=specialist.slug)
            assert created.status_code == 202, created.content
            run_id = created.json()["id"]
            deadline = time.monotonic() + POLL_TIMEOUT_S
            while time.monotonic() < deadline and not Run.objects.get(pk=run_id).is_terminal:
                time.sleep(0.25)
            body = api.get(f"/api/v1/runs/{run_id}").json()
        finally:
            _stop(worker)
    worker_log = log.read_text(errors="replace")

    assert body["status"] == "failed", (body, worker_log[-3000:])
    assert body["error_code"] == "stage_output_refused" and body["error"].startswith("U10: ")
    u10 = StageEvent.objects.get(run_id=run_id, stage="U10")
    assert u10.outcome == StageEvent.Outcome.ERROR and u10.finished_at is not None
    assert not StageEvent.objects.filter(run_id=run_id, outcome=StageEvent.Outcome.RUNNING).exists()
    assert len(model.requests) == 1  # the answer was asked for once: no re-send, no second bill
    assert "the database refused the stage's result" in worker_log  # the shell's line, with run_id and stage
    assert "raised unexpected" not in worker_log, worker_log[-3000:]  # Celery's line for an exception out of a task
