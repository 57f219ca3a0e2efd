"""Structured logs: every record carries run_id and stage, bound per task with ``bind_run``."""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

_run_id: contextvars.ContextVar[str] = contextvars.ContextVar("run_id", default="-")
_stage: contextvars.ContextVar[str] = contextvars.ContextVar("stage", default="-")

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


@contextmanager
def bind_run(run_id: object, stage: str = "-") -> Iterator[None]:
    t1, t2 = _run_id.set(str(run_id)), _stage.set(stage)
    try:
        yield
    finally:
        _run_id.reset(t1)
        _stage.reset(t2)


class RunContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "run_id"):
            record.run_id = _run_id.get()
        if not hasattr(record, "stage"):
            record.stage = _stage.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, object] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S%z"),
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
