"""A stage result the database refuses to store (issue: robustness gaps). A model's answer carrying a NUL character
reaches U10's draft; PostgreSQL refuses ``\\u0000`` in a jsonb value (a DataError). That used to leave the stage task
as an exception: the run stayed ``running``, its U10 event open, until the reaper re-sent the attempt (which failed
the same way) past STAGE_MAX_REDELIVERIES. Now the run fails at once with a stable code and a sentence, the event is
closed, nothing of the refused persist is written — while a transient database error still leaves the task, for
its bounded retry.

The NUL comes the way a real one would: the real ``openai`` SDK over HTTP from an OpenAI-protocol server on the
loopback (tests/support/openai_server.py), through the API, the shell and the gateway — nothing of ours is mocked."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError, connection
from rest_framework.test import APIClient

from engine.entry import rerun_document
from engine.shell import execute_stage
from lexery.logging import RunContextFilter
from runs.models import Run, RunContext, StageEvent
from runs.services import run_create
from tenancy.models import Specialist
from tests.conftest import post_run
from tests.support.openai_server import FakeOpenAIServer, openai_gateway

# The embedded mode runs the next stages on commit: a transactional test database lets those commits happen (and
# keeps a refused statement from being inside the test's own transaction).
pytestmark = pytest.mark.django_db(transaction=True)

# An explicit act and article: ORCH's canary decides every branch by rule, so the writer is the only model call.
QUESTION = "Яка тривалість щорічної основної відпустки за статтею 75 КЗпП?"
# What a model (or a proxy in front of one) may send: a NUL inside the text, here after the citation.
NUL_ANSWER = "Щорічна основна відпустка триває не менш як 24 календарних дні (КЗпП ст. 75).\x00"
# A lone surrogate, "\ud800" in the response's JSON: psycopg cannot encode it, before PostgreSQL sees anything.
SURROGATE_ANSWER = "Щорічна основна відпустка триває не менш як 24 календарних дні (КЗпП ст. 75).\ud800"


def _postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite stores a NUL in JSON text; the refusal (and the single-statement persist) is "
                    "PostgreSQL's")


@pytest.fixture
def model(settings: Any) -> Iterator[FakeOpenAIServer]:
    with openai_gateway(settings) as fake:
        yield fake


@pytest.mark.parametrize("answer, error_type, sqlstate", [
    (NUL_ANSWER, "DataError", "22P05"),  # untranslatable_character: \u0000 in jsonb
    (SURROGATE_ANSWER, "UnicodeEncodeError", None),
], ids=["nul", "lone-surrogate"])
def test_an_unstorable_character_in_the_models_answer_fails_the_run_with_a_code_and_a_sentence(
        api: APIClient, catalog: Any, specialist: Specialist, model: FakeOpenAIServer,
        caplog: pytest.LogCaptureFixture, answer: str, error_type: str, sqlstate: str | None) -> None:
    _postgresql()
    model.default_behaviour = {"reply": answer}
    caplog.handler.addFilter(RunContextFilter())

    with caplog.at_level(logging.ERROR, logger="engine.shell"):
        created = post_run(api, question=QUESTION, specialist=specialist.slug)  # the stages run in-process

    assert created.status_code == 202, created.content
    run_id = created.json()["id"]
    run = api.get(f"/api/v1/runs/{run_id}").json()
    assert run["status"] == "failed" and run["finished_at"]
    assert run["error_code"] == "stage_output_refused"
    assert run["error"].startswith("U10: its result held a value that cannot be stored")
    assert error_type not in run["error"] and "\\u" not in run["error"]  # the exception stays inside
    assert run["answer"] is None
    # the U10 event is closed as an error, and no stage ran after it
    events = list(StageEvent.objects.filter(run_id=run_id).order_by("step"))
    assert events[-1].stage == "U10" and events[-1].outcome == StageEvent.Outcome.ERROR
    assert all(e.outcome == StageEvent.Outcome.OK for e in events[:-1])
    assert events[-1].reason.startswith("U10 failed: StageOutputRefused: ")
    assert error_type in events[-1].detail["error"]  # the operators see what the database said
    public = api.get(f"/api/v1/runs/{run_id}/events").json()["events"][-1]
    assert public["outcome"] == "error" and public["reason"] == run["error"]
    assert public["detail"] == {"internal_errors": 1}
    # nothing of the refused persist is in the document: U9's prompt is there, no draft
    document = RunContext.objects.get(run_id=run_id).document
    assert "assembled_prompt" in document and "draft" not in document
    # one structured line for the operators, with the run and the stage
    refused = [r for r in caplog.records if "refused" in r.getMessage()]
    assert len(refused) == 1
    assert (refused[0].run_id, refused[0].stage) == (run_id, "U10")  # type: ignore[attr-defined]
    assert refused[0].error_type == error_type  # type: ignore[attr-defined]
    assert refused[0].sqlstate == sqlstate  # type: ignore[attr-defined]


def test_the_ask_command_reports_the_refusal_instead_of_a_traceback(
        catalog: Any, specialist: Specialist, model: FakeOpenAIServer) -> None:
    """``ask`` on PostgreSQL without a broker runs the stages in its own process: the DataError used to end it."""
    _postgresql()
    model.default_behaviour = {"reply": NUL_ANSWER}
    out = io.StringIO()

    with pytest.raises(CommandError, match=r"failed: U10 failed: StageOutputRefused: ") as failed:
        call_command("ask", QUESTION, "--specialist", specialist.slug, "--json", stdout=out)

    run = Run.objects.get()
    assert run.status == Run.Status.FAILED and str(run.pk) in str(failed.value)
    assert json.loads(out.getvalue())["error_code"] == "stage_output_refused"


def _running_at_u8(specialist: Specialist) -> Run:
    """A run of the question, done in-process, re-run from U8 (the next stage to run is U8, attempt 1)."""
    done = run_create(org=specialist.org, specialist=specialist, question=QUESTION)
    document = rerun_document(RunContext.objects.get(run=done).document, old_run_id=str(done.pk), stage="U8")
    run = Run.objects.create(org=done.org, specialist=specialist, question=QUESTION, flags=dict(done.flags),
                             limits=dict(done.limits), status=Run.Status.RUNNING)
    RunContext.objects.create(run=run, document=document)
    return run


def _persist_times_out(run: Run) -> None:
    """U8 of ``run`` executed while another writer holds its context row (the claim only reads it; the persist locks
    it) and PostgreSQL gives up waiting after 300 ms: an OperationalError, as a dropped connection is."""
    s = connection.settings_dict
    other = psycopg.connect(host=s["HOST"] or "127.0.0.1", port=s["PORT"] or 5432, user=s["USER"],
                            password=s["PASSWORD"] or None, dbname=s["NAME"])
    try:
        other.execute("SELECT 1 FROM runs_runcontext WHERE run_id = %s FOR UPDATE", [run.pk])
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '300ms'")
        execute_stage(str(run.pk), "U8", 1)
    finally:
        other.rollback()
        other.close()
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")


def test_a_transient_database_error_in_the_persist_still_leaves_the_task_for_its_retry(
        catalog: Any, specialist: Specialist) -> None:
    """A lock PostgreSQL gave up waiting for (``lock_timeout``: an OperationalError, as a dropped connection is) is
    not the stage's failure: the exception leaves the shell so that the task's bounded retry runs it again."""
    _postgresql()
    run = _running_at_u8(specialist)
    before = RunContext.objects.get(run=run)
    with pytest.raises(OperationalError):
        _persist_times_out(run)

    run.refresh_from_db()
    assert run.status == Run.Status.RUNNING and not run.error
    assert StageEvent.objects.get(run=run, stage="U8").outcome == StageEvent.Outcome.RUNNING  # the retry's
    after = RunContext.objects.get(run=run)
    assert (after.version, after.document) == (before.version, before.document)


def test_the_tasks_retry_takes_the_attempt_again_after_a_transient_error(
        catalog: Any, specialist: Specialist) -> None:
    """The retry used to find the attempt held by its own failed delivery and leave it to the reaper (a hard limit
    and its grace later): the failed delivery now releases its claim."""
    _postgresql()
    run = _running_at_u8(specialist)
    with pytest.raises(OperationalError):
        _persist_times_out(run)

    # when the task's retry delivers the same attempt moments later
    execute_stage(str(run.pk), "U8", 1)

    # then it runs the stage (a second delivery of the one attempt) instead of leaving it
    event = StageEvent.objects.get(run=run, stage="U8", attempt=1)
    assert event.outcome == StageEvent.Outcome.OK
    assert event.deliveries == 2
    assert RunContext.objects.get(run=run).version > 0


def test_a_transient_database_error_inside_the_stages_own_work_is_retried_not_failed(
        catalog: Any, specialist: Specialist, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stage that reads the database (its env, DocList, documents) may meet the same blink as the persist: it used
    to be caught as the stage's own failure and end the run. It now leaves the task for its bounded retry."""
    from engine import shell

    run = _running_at_u8(specialist)
    real, calls = shell.RUNNERS["U8"], []

    def blinks_once(document: dict[str, Any], env: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return real(document, env)

    monkeypatch.setitem(shell.RUNNERS, "U8", blinks_once)
    with pytest.raises(OperationalError):
        execute_stage(str(run.pk), "U8", 1)
    run.refresh_from_db()
    assert run.status == Run.Status.RUNNING and not run.error

    execute_stage(str(run.pk), "U8", 1)  # the task's retry, moments later
    event = StageEvent.objects.get(run=run, stage="U8", attempt=1)
    assert (event.outcome, event.deliveries, len(calls)) == (StageEvent.Outcome.OK, 2, 2)
