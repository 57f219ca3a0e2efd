"""The claim checks its own connection (engine/store.py): Django's health check, a ``SELECT 1`` round trip before
every task's first query, is skipped for it, so a connection the server dropped while the worker was idle must be
replaced by the claim itself, the attempt still claimed once."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from django.db import OperationalError, connection
from django.utils import timezone

from engine import store
from runs.models import Run, RunContext, StageEvent
from tenancy.models import Specialist

pytestmark = pytest.mark.django_db(transaction=True)


def _backend_pid() -> int:
    connection.ensure_connection()
    return int(connection.connection.info.backend_pid)


def _terminate(pid: int) -> None:
    """What a failover or an operator's pg_terminate_backend does to the worker's idle connection."""
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])


def _new_task() -> None:
    """As after a task starts: Django checks the connection before the task's first query."""
    wrapper: Any = connection  # the health check's attributes are Django's, not in its type stubs
    wrapper.health_check_done = False


@pytest.fixture
def running(specialist: Specialist) -> Run:
    if connection.vendor != "postgresql":
        pytest.skip("the single-statement claim is PostgreSQL's")
    run = Run.objects.create(org=specialist.org, specialist=specialist, question="q", status=Run.Status.RUNNING)
    RunContext.objects.create(run=run, document={"intake": {"question": "q"}})
    return run


def test_a_claim_on_a_connection_dropped_while_idle_claims_on_a_new_one(running: Run) -> None:
    dropped = _backend_pid()
    _terminate(dropped)
    _new_task()

    claimed = store.claim(str(running.pk), "U2", 1, timezone.now(), [])

    assert claimed is not None and claimed.event.stage == "U2" and claimed.snapshot.document["intake"]
    assert _backend_pid() != dropped
    assert StageEvent.objects.filter(run=running, stage="U2", attempt=1).count() == 1


def test_a_claim_that_fails_on_a_working_connection_raises_and_keeps_it(running: Run) -> None:
    """An operational error of the statement itself (here: the run locked elsewhere past ``lock_timeout``) is the
    task's to retry: the claim neither replaces the connection nor runs again."""
    pid = _backend_pid()
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    with psycopg.connect(**params) as other:
        other.execute("SELECT 1 FROM runs_run WHERE id = %s FOR UPDATE", [running.pk])
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '50ms'")
        _new_task()
        try:
            with pytest.raises(OperationalError):
                store.claim(str(running.pk), "U2", 1, timezone.now(), [])
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
        other.rollback()

    assert _backend_pid() == pid
    assert not StageEvent.objects.filter(run=running).exists()
