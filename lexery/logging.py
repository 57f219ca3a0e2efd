"""Structured logs: every record carries run_id and stage (bound per task with ``bind_run``), the web request's id
(bound by ``ops.middleware.RequestIdMiddleware``) and the Celery task id of the task it ran in."""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime

_run_id: contextvars.ContextVar[str] = contextvars.ContextVar("run_id", default="-")
_stage: contextvars.ContextVar[str] = contextvars.ContextVar("stage", default="-")
_request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


@contextmanager
def bind_run(run_id: object, stage: str = "-") -> Iterator[None]:
    t1, t2 = _run_id.set(str(run_id)), _stage.set(stage)
    try:
        yield
    finally:
        _run_id.reset(t1)
        _stage.reset(t2)


@contextmanager
def bind_request(request_id: str) -> Iterator[None]:
    token = _request_id.set(request_id)
    try:
        yield
    finally:
        _request_id.reset(token)


# The message header a task carries its web request's id in (``lexery/celery.py`` sets it at publish time).
TASK_REQUEST_ID_HEADER = "lexery_request_id"


def current_request_id() -> str:
    """The web request's id: bound by the middleware in the web process; inside a Celery task, the id the task's
    message carries, so a run's stage tasks (each sent by the previous one) all log the request that started it."""
    request_id = _request_id.get()
    if request_id == "-":
        request = _current_task_request()
        # a worker puts the message's own headers on the request; an in-process apply() keeps them in .headers
        carried = getattr(request, TASK_REQUEST_ID_HEADER, None) or (getattr(request, "headers", None) or {}).get(
            TASK_REQUEST_ID_HEADER)
        request_id = str(carried or "-")
    return request_id


def _current_task_request() -> object | None:
    from celery import current_task

    return getattr(current_task, "request", None) if current_task else None


def _current_task_id() -> str:
    """The id of the Celery task this thread is executing (a worker's, or an eager task inside a request)."""
    return str(getattr(_current_task_request(), "id", None) or "-")


class RunContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "run_id"):
            record.run_id = _run_id.get()
        if not hasattr(record, "stage"):
            record.stage = _stage.get()
        if not hasattr(record, "request_id"):
            # Django logs a 4xx/5xx response after the middleware has returned: the id is on its request then.
            request_id = current_request_id()
            if request_id == "-":
                request_id = getattr(getattr(record, "request", None), "request_id", "-")
            record.request_id = request_id
        if not hasattr(record, "task_id"):
            task_id = _current_task_id()
            if task_id == "-" and isinstance(record.args, Mapping) and record.name.startswith("celery."):
                # The worker's own lines about a task ("Task engine.stage.U4[…] received") are logged outside it.
                task_id = str(record.args.get("id") or "-")
            record.task_id = task_id
        return True


def iso_ms(created: float) -> str:
    """``2026-11-30T20:03:37.123+00:00``: UTC with milliseconds (stage steps are often a few ms apart)."""
    return datetime.fromtimestamp(created, tz=UTC).isoformat(timespec="milliseconds")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, object] = {
            "ts": iso_ms(record.created),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                doc[key] = value
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return json.dumps(doc, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """``LOG_FORMAT=text``: one line, the same ids as the JSON lines."""

    def __init__(self) -> None:
        super().__init__("%(ts)s %(levelname)s %(name)s req=%(request_id)s task=%(task_id)s run=%(run_id)s "
                         "stage=%(stage)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        record.ts = iso_ms(record.created)
        return super().format(record)
