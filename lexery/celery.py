"""The Celery app. Stage tasks live in ``engine.tasks``; ``engine.routing`` puts each stage on its queue."""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import before_task_publish, task_postrun, task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lexery.settings")

app = Celery("lexery")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["engine", "documents", "runs"])


@task_prerun.connect
@task_postrun.connect
def _close_old_connections(task: Any = None, **_: Any) -> None:
    """What Django does around each request: close a connection that errored or outlived CONN_MAX_AGE, keep the
    rest (CELERY_DB_REUSE_MAX keeps Celery's fix-up from closing every connection after every task). Not for a
    task run in-process (the embedded mode), whose connection belongs to its caller."""
    from django.db import close_old_connections

    if task is None or getattr(task.request, "is_eager", False):
        return
    close_old_connections()


@before_task_publish.connect
def _carry_request_id(headers: dict[str, Any] | None = None, **_: Any) -> None:
    """Every task sent inside a web request, or inside a task that carries one, carries its request id: U1 is sent
    by the web process, U2 … U12 by the stage before, so the whole run logs the request that started it. A send
    with no request behind it (the reaper's, beat's) carries none."""
    from lexery.logging import TASK_REQUEST_ID_HEADER, current_request_id

    request_id = current_request_id()
    if headers is not None and request_id != "-":
        headers.setdefault(TASK_REQUEST_ID_HEADER, request_id)
