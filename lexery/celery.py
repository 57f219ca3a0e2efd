"""The Celery app. Stage tasks live in ``engine.tasks``; routing puts each stage kind on its own queue."""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lexery.settings")

app = Celery("lexery")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["engine", "documents", "runs"])


@worker_ready.connect
def _warm_retrieval(sender: Any = None, **_: Any) -> None:
    """Lifecycle, not business logic: a worker that will run U4 builds its search indexes as it starts."""
    from engine.warmup import warm_retrieval

    consumer = getattr(sender, "task_consumer", None)
    warm_retrieval(q.name for q in getattr(consumer, "queues", []) or [])
