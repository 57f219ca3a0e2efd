"""The next stage's sent mark is off the critical path (engine/dispatch.py): it rides on the worker's next claim, and
a worker left idle writes it itself well before the reaper would take the row for unsent."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from engine import dispatch, store
from engine.models import OutboxMessage
from runs.models import Run, RunContext
from tenancy.models import Specialist

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_idle_worker_writes_its_sent_marks_before_the_reaper_would_resend(specialist: Specialist,
                                                                             settings: Any) -> None:
    settings.OUTBOX_SENT_MARK_DELAY_S = 0.05
    run = Run.objects.create(org=specialist.org, specialist=specialist, question="q", status=Run.Status.RUNNING)
    row = OutboxMessage.objects.create(run=run, stage="U2", attempt=1, queue="stages")

    dispatch.give_back_sent_marks([row.pk])  # what a successful send does; no claim follows
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and OutboxMessage.objects.get(pk=row.pk).sent_at is None:
        time.sleep(0.02)

    row.refresh_from_db()
    assert row.sent_at is not None and row.sends == 1 and row.last_error == ""
    assert dispatch.take_sent_marks() == []
    assert settings.OUTBOX_SENT_MARK_DELAY_S < settings.OUTBOX_SEND_GRACE_S


def test_the_idle_timer_leaves_a_fresh_mark_to_the_next_claim(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    """The timer writes only marks OUTBOX_SENT_MARK_DELAY_S old: a busy worker's next claim carries a fresh one for
    free, instead of the timer opening a connection for it in the middle of a stage."""
    settings.OUTBOX_SENT_MARK_DELAY_S = 60  # the real timer stays out of the way; the clock below decides
    clock = [1000.0]
    monkeypatch.setattr(dispatch.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(dispatch, "_claims_here", True)  # a stage worker: its claims carry the marks
    try:
        dispatch.give_back_sent_marks([101])
        clock[0] += 59
        dispatch.give_back_sent_marks([102])
        clock[0] += 2  # 101 is 61 s old: due; 102 is 2 s old

        assert dispatch._take_due_marks() == [101]
        assert dispatch.take_sent_marks() == [102]  # what the next claim carries
    finally:
        dispatch.take_sent_marks()
        timer = dispatch._sent_marks_timer
        if timer is not None:
            timer.cancel()


def test_a_process_that_never_claims_writes_every_waiting_mark_when_its_timer_fires(
        monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    """A web process sends U1 for each POST and claims nothing: its timer takes every mark, young ones included, and
    is not re-armed for each young mark — under load it was, every few milliseconds, each time on a new database
    connection, and every request of the process was ~40 % slower."""
    settings.OUTBOX_SENT_MARK_DELAY_S = 60
    clock = [1000.0]
    monkeypatch.setattr(dispatch.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(dispatch, "_claims_here", False)
    try:
        dispatch.give_back_sent_marks([201])
        clock[0] += 59
        dispatch.give_back_sent_marks([202])
        clock[0] += 0.5

        assert dispatch._take_due_marks() == [201, 202]
        assert dispatch._sent_marks == []  # nothing left to re-arm the timer for
    finally:
        dispatch.take_sent_marks()
        timer = dispatch._sent_marks_timer
        if timer is not None:
            timer.cancel()


def _outbox_updates() -> tuple[int, int]:
    """The outbox's (updates, HOT updates) as PostgreSQL counts them, this connection's own counts included."""
    with connection.cursor() as cursor:
        # Flushed to the shared statistics when this backend next goes idle: right after this statement.
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = %s",
                       [OutboxMessage._meta.db_table])
        updates, hot = cursor.fetchone()
    return int(updates), int(hot)


def test_the_sent_marks_a_claim_writes_are_hot_updates(specialist: Specialist) -> None:
    """The sent mark changes no indexed column of its outbox row (engine/models.py), so PostgreSQL writes the row's
    new version beside the old one and no index entry. Every stage writes one; with ``sent_at`` indexed each was a
    new entry in all four of the table's indexes (0 of 363 marks HOT in a make bench)."""
    # pg_version: an attribute of Django's PostgreSQL wrapper only, not in its type stubs
    if connection.vendor != "postgresql" or getattr(connection, "pg_version", 0) < 150000:
        pytest.skip("PostgreSQL 15+'s statistics (pg_stat_force_next_flush)")
    run = Run.objects.create(org=specialist.org, specialist=specialist, question="q")
    RunContext.objects.create(run=run, document={}, version=0)
    rows = [OutboxMessage.objects.create(run=run, stage=stage, attempt=1, queue="stages")
            for stage in ("U1", "U2", "U3")]
    updates, hot = _outbox_updates()

    claimed = store.claim(str(run.pk), "U1", 1, timezone.now(), [row.pk for row in rows])

    assert claimed is not None
    assert all(row.sends == 1 for row in OutboxMessage.objects.filter(run=run))
    updates_after, hot_after = _outbox_updates()
    assert updates_after - updates == hot_after - hot >= 3  # ours, and any other process's: all HOT
