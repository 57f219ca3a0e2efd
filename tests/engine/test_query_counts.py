"""Query counts where they matter (issue 14): the stage shell's round trips per stage are the engine's overhead
(issue 11, make bench), and the run API's reads must not grow with a run's events."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from engine import store
from engine.models import OutboxMessage
from engine.shell import execute_stage
from runs.models import RunContext, StageEvent
from tenancy.models import Specialist
from tests.conftest import post_run
from tests.engine.staged import QUESTION, run_at

pytestmark = pytest.mark.django_db(transaction=True)


def test_one_stage_costs_a_fixed_number_of_round_trips(catalog: Any, specialist: Specialist, settings: Any) -> None:
    """U8 (pure reasoning) on the distributed path, in a process that does not hold the run: one claim statement and
    one persist statement (engine/store.py); the next stage's outbox row is marked sent by this process's next
    statement (U9's), not by a round trip of its own."""
    if connection.vendor != "postgresql":
        pytest.skip("the single-statement claim and persist are PostgreSQL's; other databases take the ORM path")
    with run_at("U8", specialist, settings) as run:
        with CaptureQueriesContext(connection) as queries:
            execute_stage(str(run.pk), "U8", 1)
        u9 = OutboxMessage.objects.get(run=run, stage="U9")
        assert u9.sent_at is None and u9.sends == 0  # sent, its mark waiting for the next claim
        execute_stage(str(run.pk), "U9", 1)

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
    with run_at("U8", specialist, settings) as run:
        execute_stage(str(run.pk), "U8", 1)
        stored = RunContext.objects.get(run=run)
        held = store._held
        assert held is not None and (held.run_id, held.version) == (str(run.pk), stored.version)
        assert held.document == stored.document  # exactly what the database holds
        stored.document = {**stored.document, "superseded_by": "another writer"}
        stored.version += 1
        stored.save()  # another writer moved it: the claim must read it again

        claimed = store.claim(str(run.pk), "U9", 1, timezone.now(), [])

    assert claimed is not None
    assert claimed.snapshot.version == stored.version
    assert claimed.snapshot.document["superseded_by"] == "another writer"
