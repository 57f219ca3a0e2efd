"""Query counts where they matter (issue 14): the stage shell's round trips per stage are the engine's overhead
(issue 11, make bench), and the run API's reads must not grow with a run's events."""

from __future__ import annotations

import os
from typing import Any

import pytest
import redis
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from engine import dispatch, store
from engine.entry import rerun_document
from engine.models import OutboxMessage
from engine.shell import execute_stage
from runs.models import Run, RunContext, StageEvent
from runs.services import run_create
from tenancy.models import Specialist
from tests.conftest import post_run

pytestmark = pytest.mark.django_db(transaction=True)
QUESTION = "Скільки календарних днів триває щорічна основна відпустка?"
BROKER_URL = os.environ.get("E2E_BROKER_URL", "redis://127.0.0.1:6379/14")


def test_one_stage_costs_a_fixed_number_of_round_trips(catalog: Any, specialist: Specialist, settings: Any) -> None:
    """U8 (pure reasoning) on the distributed path: one claim statement and one persist statement (engine/store.py);
    the next stage's outbox row is marked sent by this process's next claim, not by a round trip of its own."""
    if connection.vendor != "postgresql":
        pytest.skip("the single-statement claim and persist are PostgreSQL's; other databases take the ORM path")
    run, app = _running_at_u8(specialist, settings)
    try:
        with CaptureQueriesContext(connection) as queries:
            execute_stage(str(run.pk), "U8", 1)
        u9 = OutboxMessage.objects.get(run=run, stage="U9")
        assert u9.sent_at is None and u9.sends == 0  # sent, its mark waiting for the next claim
        execute_stage(str(run.pk), "U9", 1)
    finally:
        redis.Redis.from_url(BROKER_URL).flushdb()
        app.conf.broker_url = "memory://localhost/"
        dispatch.take_sent_marks()  # U10's, sent by U9: nothing for the idle timer to write after this test

    assert StageEvent.objects.get(run=run, stage="U8").outcome == StageEvent.Outcome.OK
    assert len(queries.captured_queries) == 2, [(q["sql"] or "")[:80] for q in queries.captured_queries]
    # prepared statements (engine/store.py) still show in the query log, as the claim and the persist
    claim_sql, persist_sql = (q["sql"] for q in queries.captured_queries)
    assert "INSERT INTO runs_stageevent" in claim_sql and "UPDATE runs_runcontext" in persist_sql
    u9.refresh_from_db()
    assert u9.sent_at is not None and u9.sends == 1
    assert StageEvent.objects.get(run=run, stage="U9").outcome == StageEvent.Outcome.OK


@pytest.mark.parametrize("path", ["", "/events"])
def test_reading_a_run_costs_the_same_whatever_its_length(api: APIClient, catalog: Any, specialist: Specialist,
                                                          path: str, django_assert_max_num_queries: Any) -> None:
    short = post_run(api, question=QUESTION, specialist=specialist.slug).json()["id"]
    long = post_run(api, question=QUESTION, specialist=specialist.slug).json()["id"]
    u4 = StageEvent.objects.get(run_id=long, stage="U4")
    StageEvent.objects.bulk_create([StageEvent(run_id=long, stage="U4", attempt=n, step=100 + n,
                                               started_at=u4.started_at, outcome="ok") for n in range(2, 12)])
    with CaptureQueriesContext(connection) as first:
        assert api.get(f"/api/v1/runs/{short}{path}").status_code == 200
    with django_assert_max_num_queries(len(first.captured_queries)):
        assert api.get(f"/api/v1/runs/{long}{path}").status_code == 200


def test_the_next_claim_takes_the_document_from_memory_only_at_the_version_it_persisted(
        catalog: Any, specialist: Specialist, settings: Any) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the held document belongs to the PostgreSQL claim")
    run, app = _running_at_u8(specialist, settings)
    try:
        execute_stage(str(run.pk), "U8", 1)
        stored = RunContext.objects.get(run=run)
        held = store._held
        assert held is not None and (held.run_id, held.version) == (str(run.pk), stored.version)
        assert held.document == stored.document  # exactly what the database holds
        stored.document = {**stored.document, "superseded_by": "another writer"}
        stored.version += 1
        stored.save()  # another writer moved it: the claim must read it again

        claimed = store.claim(str(run.pk), "U9", 1, timezone.now(), [])
    finally:
        redis.Redis.from_url(BROKER_URL).flushdb()
        app.conf.broker_url = "memory://localhost/"
        dispatch.take_sent_marks()

    assert claimed is not None
    assert claimed.snapshot.version == stored.version
    assert claimed.snapshot.document["superseded_by"] == "another writer"


def _running_at_u8(specialist: Specialist, settings: Any) -> tuple[Run, Any]:
    """A run of the question, done in-process, re-run from U8 on the real broker: (the new run, the Celery app)."""
    done = run_create(org=specialist.org, specialist=specialist, question=QUESTION)
    document = rerun_document(RunContext.objects.get(run=done).document, old_run_id=str(done.pk), stage="U8")
    run = Run.objects.create(org=done.org, specialist=specialist, question=QUESTION, flags=dict(done.flags),
                             limits=dict(done.limits), status=Run.Status.RUNNING)
    RunContext.objects.create(run=run, document=document)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_BROKER_URL = BROKER_URL
    from lexery.celery import app

    app.conf.broker_url = BROKER_URL
    return run, app
