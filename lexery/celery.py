"""The Celery app. Stage tasks live in ``engine.tasks``; ``engine.routing`` puts each stage on its queue."""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import worker_process_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lexery.settings")

app = Celery("lexery")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["engine", "documents", "runs"])


def _consumed_queues() -> list[str]:
    return list(app.amqp.queues.consume_from or app.amqp.queues)


@worker_ready.connect
def _warm_in_solo_worker(sender: Any = None, **_: Any) -> None:
    """Lifecycle, not business logic: a worker that will run U4 builds its search indexes as it starts. In a
    prefork pool the tasks run in child processes, which warm themselves (below); the parent must not open the
    local search store, or the child could not."""
    if "prefork" in type(getattr(sender, "pool", None)).__module__:
        return
    from engine.warmup import warm_retrieval

    warm_retrieval(_consumed_queues())


@worker_process_init.connect
def _warm_in_child(**_: Any) -> None:
    from engine.warmup import warm_retrieval

    warm_retrieval(_consumed_queues())
