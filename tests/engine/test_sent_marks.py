"""The next stage's sent mark is off the critical path (engine/dispatch.py): it rides on the worker's next claim, and
a worker left idle writes it itself well before the reaper would take the row for unsent."""

from __future__ import annotations

import time
from typing import Any

import pytest

from engine import dispatch
from engine.models import OutboxMessage
from runs.models import Run
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
