"""A stage attempt delivered again after its holder died (issue 11): it runs again, counts the delivery, bills the
model calls it sends again as their own ledger rows, and is left alone while its holder may still be computing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from engine.shell import execute_stage
from llm.models import CostLedgerEntry
from runs.models import Run, StageEvent
from runs.services import run_create
from tenancy.models import Specialist

# The embedded mode runs the next stages on commit: a transactional test database lets those commits happen.
pytestmark = pytest.mark.django_db(transaction=True)
QUESTION = "Скільки календарних днів триває щорічна основна відпустка?"


def _interrupted_at_u10(specialist: Specialist, held_for_s: float) -> tuple[Run, StageEvent]:
    """A finished run turned back into one whose U10 holder died ``held_for_s`` seconds after claiming it."""
    run = run_create(org=specialist.org, specialist=specialist, question=QUESTION)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.error
    u10 = StageEvent.objects.get(run=run, stage="U10", attempt=1)
    StageEvent.objects.filter(run=run, step__gt=u10.step).delete()
    u10.outcome, u10.finished_at = StageEvent.Outcome.RUNNING, None
    u10.claimed_at = timezone.now() - timedelta(seconds=held_for_s)
    u10.save()
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING, finished_at=None, current_stage="U10")
    return run, u10


def test_a_redelivered_writer_call_is_billed_again_as_its_own_row(catalog: Any, specialist: Specialist,
                                                                   settings: Any) -> None:
    run, u10 = _interrupted_at_u10(specialist, held_for_s=settings.STAGE_TIME_LIMIT_S + 1)
    first = CostLedgerEntry.objects.get(run=run, stage="U10", role="writer")

    execute_stage(str(run.pk), "U10", 1)

    run.refresh_from_db()
    u10.refresh_from_db()
    assert run.status == Run.Status.DONE
    assert u10.deliveries == 2 and u10.outcome == StageEvent.Outcome.OK
    rows = CostLedgerEntry.objects.filter(run=run, stage="U10", role="writer").order_by("delivery")
    assert [r.delivery for r in rows] == [1, 2]
    assert rows[0].idempotency_key == first.idempotency_key and rows[1].idempotency_key != first.idempotency_key


def test_a_delivery_while_the_holder_may_still_compute_leaves_the_attempt(catalog: Any, specialist: Specialist,
                                                                          settings: Any) -> None:
    run, u10 = _interrupted_at_u10(specialist, held_for_s=1)

    execute_stage(str(run.pk), "U10", 1)

    u10.refresh_from_db()
    assert u10.deliveries == 1 and u10.outcome == StageEvent.Outcome.RUNNING
    assert CostLedgerEntry.objects.filter(run=run, stage="U10").count() == 1


def test_an_attempt_delivered_past_the_bound_fails_the_run_with_the_reason(catalog: Any, specialist: Specialist,
                                                                           settings: Any) -> None:
    run, u10 = _interrupted_at_u10(specialist, held_for_s=settings.STAGE_TIME_LIMIT_S + 1)
    StageEvent.objects.filter(pk=u10.pk).update(deliveries=settings.STAGE_MAX_REDELIVERIES + 1)

    execute_stage(str(run.pk), "U10", 1)

    run.refresh_from_db()
    u10.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert "STAGE_MAX_REDELIVERIES" in run.error and "U10 attempt 1" in run.error
    assert u10.outcome == StageEvent.Outcome.ERROR
    assert CostLedgerEntry.objects.filter(run=run, stage="U10").count() == 1  # nothing sent again
