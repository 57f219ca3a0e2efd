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
