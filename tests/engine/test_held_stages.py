"""The held path (engine/held.py): the stage a process sent after its own persist is computed on the document it
holds and claimed by its own persist — one statement — and whenever anything moved in between, that statement
writes nothing and the stage is claimed, computed on what the claim reads, and stored once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from engine import runners, store
from engine.models import OutboxMessage
from engine.runners import StageEnv, StageResult
from engine.shell import execute_stage
from runs.models import Run, RunContext, StageEvent
from tenancy.models import Specialist
from tests.engine.staged import run_at

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgres_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the single-statement claim and persist are PostgreSQL's; other databases take the ORM path")


def _stored(run: Run) -> tuple[int, dict[str, Any]]:
    context = RunContext.objects.get(run=run)
    return context.version, context.document


def test_the_stage_a_process_sent_itself_costs_one_statement(catalog: Any, specialist: Specialist,
                                                              settings: Any) -> None:
    with run_at("U8", specialist, settings) as run:
        execute_stage(str(run.pk), "U8", 1)  # claimed: this process held nothing of the run
        u8 = StageEvent.objects.get(run=run, stage="U8")
        with CaptureQueriesContext(connection) as queries:
            execute_stage(str(run.pk), "U9", 1)

    [statement] = [q["sql"] or "" for q in queries.captured_queries]
    assert "INSERT INTO runs_stageevent" in statement and "UPDATE runs_runcontext" in statement
    u9 = StageEvent.objects.get(run=run, stage="U9")
    assert (u9.outcome, u9.attempt, u9.step, u9.deliveries) == (StageEvent.Outcome.OK, 1, u8.step + 1, 1)
    assert u9.next_action == "RUN_U10" and u9.finished_at is not None and u9.compute_ms is not None
    run.refresh_from_db()
    assert (run.steps, run.current_stage, run.status) == (u9.step, "U9", Run.Status.RUNNING)
    assert OutboxMessage.objects.get(run=run, stage="U9").sends == 1  # U8's send, marked by this statement
    assert OutboxMessage.objects.filter(run=run, stage="U10", attempt=1).exists()
    assert "assembled_prompt" in _stored(run)[1]


def test_switched_off_every_stage_is_claimed_first(catalog: Any, specialist: Specialist, settings: Any) -> None:
    settings.ENGINE_HELD_STAGES = False
    with run_at("U8", specialist, settings) as run:
        execute_stage(str(run.pk), "U8", 1)
        with CaptureQueriesContext(connection) as queries:
            execute_stage(str(run.pk), "U9", 1)

    assert len(queries.captured_queries) == 2
    assert StageEvent.objects.get(run=run, stage="U9").outcome == StageEvent.Outcome.OK


def test_an_attempt_another_delivery_claimed_meanwhile_is_left_to_it(catalog: Any, specialist: Specialist,
                                                                    settings: Any) -> None:
    with run_at("U8", specialist, settings) as run:
        execute_stage(str(run.pk), "U8", 1)
        before = _stored(run)
        held = store.held(str(run.pk))
        store.drop_held()
        other = store.claim(str(run.pk), "U9", 1, timezone.now(), [])  # another worker's claim
        store._hold(held)
        assert other is not None
        execute_stage(str(run.pk), "U9", 1)

    u9 = StageEvent.objects.get(run=run, stage="U9")
    assert (u9.outcome, u9.deliveries) == (StageEvent.Outcome.RUNNING, 1)  # still the other delivery's
    assert _stored(run) == before
    assert not OutboxMessage.objects.filter(run=run, stage="U10").exists()


def test_a_run_cancelled_meanwhile_gets_no_event_and_no_next_stage(catalog: Any, specialist: Specialist,
                                                                  settings: Any) -> None:
    with run_at("U8", specialist, settings) as run:
        execute_stage(str(run.pk), "U8", 1)
        before = _stored(run)
        Run.objects.filter(pk=run.pk).update(status=Run.Status.CANCELLED)
        execute_stage(str(run.pk), "U9", 1)

    assert not StageEvent.objects.filter(run=run, stage="U9").exists()
    assert _stored(run) == before
    assert Run.objects.get(pk=run.pk).status == Run.Status.CANCELLED
    assert not OutboxMessage.objects.filter(run=run, stage="U10").exists()


def test_a_document_another_writer_moved_is_computed_again_and_kept(catalog: Any, specialist: Specialist,
                                                                   settings: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    with run_at("U8", specialist, settings) as run:
        calls = _counting(monkeypatch, "U9")
        execute_stage(str(run.pk), "U8", 1)
        context = RunContext.objects.get(run=run)
        context.document = {**context.document, "superseded_by": "another writer"}
        context.version += 1
        context.save()
        execute_stage(str(run.pk), "U9", 1)

    assert len(calls) == 2  # on the held document (thrown away), then on the one the claim read
    assert calls[1]["superseded_by"] == "another writer" and "superseded_by" not in calls[0]
    version, document = _stored(run)
    assert document["superseded_by"] == "another writer" and "assembled_prompt" in document
    assert version == context.version + 1
    assert StageEvent.objects.get(run=run, stage="U9").outcome == StageEvent.Outcome.OK


def test_a_stage_that_fails_on_the_held_document_fails_the_run_once(catalog: Any, specialist: Specialist,
                                                                    settings: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def broken(document: dict[str, Any], env: StageEnv) -> StageResult:
        calls.append(1)
        raise ValueError("a bug in U9")

    with run_at("U8", specialist, settings) as run:
        monkeypatch.setitem(runners.RUNNERS, "U9", broken)
        execute_stage(str(run.pk), "U8", 1)
        execute_stage(str(run.pk), "U9", 1)

    assert calls == [1]  # recorded from the held computation: the claim read the same document
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED and "U9 failed: ValueError: a bug in U9" in run.error
    u9 = StageEvent.objects.get(run=run, stage="U9")
    assert u9.outcome == StageEvent.Outcome.ERROR and u9.next_action == "FAIL"


def test_a_stage_that_reaches_for_a_model_is_claimed_before_it_computes(catalog: Any, specialist: Specialist,
                                                                       settings: Any,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    real = runners.RUNNERS["U9"]
    claimed_while_computing: list[bool] = []

    def asks_a_model(document: dict[str, Any], env: StageEnv) -> StageResult:
        claimed_while_computing.append(StageEvent.objects.filter(run_id=env.run_id, stage="U9").exists())
        env.gateway()  # U9's triage in model mode does this
        return real(document, env)

    with run_at("U8", specialist, settings) as run:
        monkeypatch.setitem(runners.RUNNERS, "U9", asks_a_model)
        execute_stage(str(run.pk), "U8", 1)
        execute_stage(str(run.pk), "U9", 1)

    assert claimed_while_computing == [False, True]  # stopped at the gateway, then run again under its claim
    u9 = StageEvent.objects.get(run=run, stage="U9")
    assert (u9.outcome, u9.deliveries) == (StageEvent.Outcome.OK, 1)


def test_a_stage_sent_by_another_process_is_claimed(catalog: Any, specialist: Specialist, settings: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """This process holds the run at U8 but U10 is not what it sent (U9 ran elsewhere): no computing on a stale
    document — the claim comes first."""
    with run_at("U8", specialist, settings) as run:
        calls = _counting(monkeypatch, "U10")
        execute_stage(str(run.pk), "U8", 1)
        held = store.held(str(run.pk))
        store.drop_held()
        execute_stage(str(run.pk), "U9", 1)  # as another worker: claims and stores U9
        store._hold(held)
        with CaptureQueriesContext(connection) as queries:
            execute_stage(str(run.pk), "U10", 1)

    assert len(calls) == 1
    assert "INSERT INTO runs_stageevent" in (queries.captured_queries[0]["sql"] or "")  # the claim, first
    assert StageEvent.objects.get(run=run, stage="U10").outcome == StageEvent.Outcome.OK


def _counting(monkeypatch: pytest.MonkeyPatch, stage: str) -> list[dict[str, Any]]:
    """The documents ``stage`` computes on, one per computation (its real runner still runs)."""
    real: Callable[[dict[str, Any], StageEnv], StageResult] = runners.RUNNERS[stage]
    seen: list[dict[str, Any]] = []

    def counted(document: dict[str, Any], env: StageEnv) -> StageResult:
        seen.append(dict(document))
        return real(document, env)

    monkeypatch.setitem(runners.RUNNERS, stage, counted)
    return seen
