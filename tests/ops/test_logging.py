"""Log lines: millisecond timestamps, the web request's id on every line of the request (given or made, and echoed),
the Celery task id on every line of a task."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.test import Client

from engine import dispatch
from engine.specs import spec
from lexery.celery import app
from lexery.logging import (
    TASK_REQUEST_ID_HEADER,
    JsonFormatter,
    RunContextFilter,
    TextFormatter,
    bind_request,
    bind_run,
)

TS_MS = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00"


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """The root logger's console handler as settings configure it (JSON, the run/request/task filter)."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RunContextFilter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield out
    root.removeHandler(handler)
    root.setLevel(level)


def lines(out: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_given_request_id_is_on_the_log_lines_and_echoed(json_lines: io.StringIO) -> None:
    # when a request that logs (Django logs a 404 as a warning) carries the caller's id
    response = Client().get("/no-such-page", headers={"X-Request-ID": "edge-7f3a.1"})
    # then
    assert response.status_code == 404
    assert response["X-Request-ID"] == "edge-7f3a.1"
    logged = [line for line in lines(json_lines) if line["logger"] == "django.request"]
    assert logged and all(line["request_id"] == "edge-7f3a.1" for line in logged)
    assert all(re.fullmatch(TS_MS, str(line["ts"])) for line in logged)


@pytest.mark.parametrize("given", [None, "", "has space", "x" * 129, "inject\nline", "quote\"d"])
def test_a_missing_or_unsafe_request_id_is_replaced_by_a_new_one(given: str | None) -> None:
    headers = {"X-Request-ID": given} if given is not None else {}
    echoed = Client().get("/healthz", headers=headers)["X-Request-ID"]
    assert re.fullmatch(r"[0-9a-f]{32}", echoed)


def test_each_request_gets_its_own_id() -> None:
    assert Client().get("/healthz")["X-Request-ID"] != Client().get("/healthz")["X-Request-ID"]


@app.task(name="tests.ops.logs_a_line")
def logs_a_line() -> None:
    with bind_run("run-1", "U4"):
        logging.getLogger("engine.shell").warning("stage done")


def test_a_task_s_log_lines_carry_its_task_id(json_lines: io.StringIO) -> None:
    # when a task runs (Celery's own tracer, in this process)
    result = logs_a_line.apply()
    # then its line carries the task id beside the run and stage
    line = next(x for x in lines(json_lines) if x["msg"] == "stage done")
    assert line["task_id"] == result.id
    assert (line["run_id"], line["stage"], line["request_id"]) == ("run-1", "U4", "-")
    # and a line outside any task says so
    logging.getLogger("x").warning("outside")
    assert next(x for x in lines(json_lines) if x["msg"] == "outside")["task_id"] == "-"


def test_the_text_format_has_milliseconds_and_the_ids() -> None:
    record = logging.LogRecord("engine.shell", logging.INFO, __file__, 1, "stage done", None, None)
    RunContextFilter().filter(record)
    line = TextFormatter().format(record)
    assert re.match(TS_MS + r" INFO engine\.shell req=- task=- run=- stage=- stage done$", line), line


def test_the_worker_s_received_line_carries_the_task_id_it_names() -> None:
    # given the record Celery's consumer logs when a message arrives (celery.worker.strategy, outside the task)
    from celery.app.trace import LOG_RECEIVED

    record = logging.LogRecord("celery.worker.strategy", logging.INFO, __file__, 1, LOG_RECEIVED,
                               ({"name": "engine.stage.U4", "id": "4f1c-task"},), None)
    # when
    RunContextFilter().filter(record)
    # then
    assert record.__dict__["task_id"] == "4f1c-task"
    assert record.getMessage() == "Task engine.stage.U4[4f1c-task] received"


def _sent_headers(broker: redis.Redis, stage: str) -> dict[str, object]:
    """The headers of the one message waiting in the stage's Redis queue (kombu's JSON envelope)."""
    messages = broker.lrange(spec(stage).queue, 0, -1)
    assert len(messages) == 1
    return dict(json.loads(messages[0])["headers"])


@app.task(name="tests.ops.sends_the_next_stage")
def sends_the_next_stage() -> None:
    logging.getLogger("engine.shell").warning("stage done")
    dispatch.send("run-9", "U2", 1)  # what the shell does after a stage: the next one, sent from the worker


def test_a_stage_sent_in_a_web_request_carries_its_request_id(broker: redis.Redis) -> None:
    # when U1 is sent inside a request (what POST /api/v1/runs does after its commit)
    with bind_request("req-abc.1"):
        dispatch.send("run-9", "U1", 1)
    # then the message on the real broker carries the request's id
    assert _sent_headers(broker, "U1")[TASK_REQUEST_ID_HEADER] == "req-abc.1"


def test_a_task_carrying_a_request_id_logs_it_and_hands_it_to_the_next_stage(broker: redis.Redis,
                                                                             json_lines: io.StringIO) -> None:
    # when a stage task that came with the request's id runs (Celery's tracer, in this process) and sends U2
    sends_the_next_stage.apply(headers={TASK_REQUEST_ID_HEADER: "req-abc.2"})
    # then its lines carry the request id, and so does the next stage's message (and so on to U12)
    line = next(x for x in lines(json_lines) if x["msg"] == "stage done")
    assert line["request_id"] == "req-abc.2"
    assert _sent_headers(broker, "U2")[TASK_REQUEST_ID_HEADER] == "req-abc.2"


def test_a_send_with_no_request_behind_it_carries_no_id(broker: redis.Redis) -> None:
    dispatch.send("run-9", "U3", 1)  # the reaper's re-send, beat's tasks
    assert TASK_REQUEST_ID_HEADER not in _sent_headers(broker, "U3")


@pytest.mark.django_db(transaction=True)  # real commits: U1 is sent after the run's, inside the request
def test_post_runs_sends_u1_with_the_request_id_it_echoes(broker: redis.Redis, api: Any, specialist: Any) -> None:
    response = api.post("/api/v1/runs", {"question": "Скільки днів триває щорічна відпустка?",
                                         "specialist": specialist.slug}, format="json",
                        headers={"X-Request-ID": "portal-77"})
    assert response.status_code == 202 and response["X-Request-ID"] == "portal-77"
    assert _sent_headers(broker, "U1")[TASK_REQUEST_ID_HEADER] == "portal-77"
