"""The Celery app. Stage tasks live in ``orch.tasks``; routing puts each stage kind on its own queue."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lexery.settings")

app = Celery("lexery")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["orch", "documents"])
