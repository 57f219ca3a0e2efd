"""Periodic work of the runs app (Celery beat: ``CELERY_BEAT_SCHEDULE`` in settings)."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from runs.lifecycle import runs_purge


@shared_task(name="runs.purge", ignore_result=True)
def runs_purge_task() -> int:
    """Purge runs older than ``RUN_RETENTION_DAYS`` (0: keep them)."""
    if settings.RUN_RETENTION_DAYS <= 0:
        return 0
    return runs_purge(older_than_days=settings.RUN_RETENTION_DAYS)
