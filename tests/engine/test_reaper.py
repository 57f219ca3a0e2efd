"""The reaper against the database and the real Redis broker (no worker: what it sends waits in the queue, where
the test reads it). Time is moved by passing ``now``, never by sleeping."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from engine.dispatch import send
from engine.models import OutboxMessage
from engine.reaper import reap
from engine.shell import execute_stage
from engine.specs import spec
from runs.models import Run, RunContext, StageEvent
from tests.support.broker import queued_tasks

pytestmark = pytest.mark.django_db


def _run(specialist, status: str = Run.Status.RUNNING) -> Run:
    run = Run.objects.create(org=specialist.org, specialist=specialist, question="Скільки днів відпустки?",
                             status=status, current_stage="U3")
    RunContext.objects.create(run=run, document={})
    return run


def _sent(run: Run, stage: str, at: datetime, sends: int = 1) -> OutboxMessage:
    return OutboxMessage.objects.create(run=run, stage=stage, attempt=1, queue=spec(stage).queue, sent_at=at,
                                        sends=sends)


def _claimed(run: Run, stage: str, at: datetime, deliveries: int = 1) -> StageEvent:
    return StageEvent.objects.create(run=run, stage=stage, attempt=1, step=3, started_at=at, claimed_at=at,
                                     deliveries=deliveries)


def _deadline(stage: str) -> timedelta:
    return timedelta(seconds=spec(stage).hard_limit_s + settings.REAPER_GRACE_S)


def test_an_unsent_outbox_row_is_sent_once_its_grace_has_passed(broker, specialist):
    run = _run(specialist, status=Run.Status.QUEUED)
    row = OutboxMessage.objects.create(run=run, stage="U1", attempt=1, queue="stages", last_error="refused")

    assert reap().sent == 0  # just committed: the sender after commit may still be sending it
    assert queued_tasks(broker, "stages") == []

    report = reap(timezone.now() + timedelta(seconds=settings.OUTBOX_SEND_GRACE_S + 1))

    assert report.sent == 1
    row.refresh_from_db()
    assert row.sent_at is not None and row.sends == 1 and row.last_error == ""
    assert queued_tasks(broker, "stages") == [{"task": "engine.stage.U1", "args": [str(run.pk), "U1", 1]}]
    assert reap(timezone.now() + timedelta(seconds=settings.OUTBOX_SEND_GRACE_S + 1)).sent == 0  # sent once


def test_a_stalled_attempt_is_sent_again_after_its_hard_limit_and_grace(broker, specialist):
    t0 = timezone.now()
    run = _run(specialist)
    row = _sent(run, "U4", t0)
    event = _claimed(run, "U4", t0)

    assert not reap(t0 + _deadline("U4") - timedelta(seconds=1)).acted  # the holder may still be computing
    report = reap(t0 + _deadline("U4") + timedelta(seconds=1))

    assert report.resent == 1 and report.failed == 0
    row.refresh_from_db()
    assert row.sends == 2 and row.sent_at is not None and row.sent_at > t0
    assert queued_tasks(broker, "retrieval") == [{"task": "engine.stage.U4", "args": [str(run.pk), "U4", 1]}]
    event.refresh_from_db()
    assert event.outcome == StageEvent.Outcome.RUNNING  # the re-sent delivery reclaims it, not the reaper
    run.refresh_from_db()
    assert run.status == Run.Status.RUNNING


def test_a_sent_attempt_no_worker_ever_claimed_is_sent_again(broker, specialist):
    t0 = timezone.now()
    run = _run(specialist)
    _sent(run, "U2", t0)  # the message was lost before any worker took it (a flushed broker)

    assert reap(t0 + _deadline("U2") + timedelta(seconds=1)).resent == 1
    assert queued_tasks(broker, "stages") == [{"task": "engine.stage.U2", "args": [str(run.pk), "U2", 1]}]


def test_an_unclaimed_attempt_is_not_sent_again_while_its_queue_holds_messages(broker, specialist):
    """A backlog longer than the deadline is load, not loss: re-sending would duplicate it and, after
    STAGE_MAX_REDELIVERIES rounds, fail runs that were only waiting their turn."""
    t0 = timezone.now()
    run = _run(specialist)
    row = _sent(run, "U2", t0)
    send(str(run.pk), "U2", 1)  # still in the queue, behind other runs' stages

    assert not reap(t0 + 10 * _deadline("U2")).acted

    row.refresh_from_db()
    assert row.sends == 1
    assert len(queued_tasks(broker, "stages")) == 1


def test_an_attempt_sent_too_often_fails_the_run_with_the_bound_as_its_reason(broker, specialist):
    t0 = timezone.now()
    bound = spec("U8").max_redeliveries
    run = _run(specialist)
    _sent(run, "U8", t0, sends=bound + 1)
    event = _claimed(run, "U8", t0, deliveries=bound + 1)

    report = reap(t0 + _deadline("U8") + timedelta(seconds=1))

    assert report.failed == 1 and report.resent == 0
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED and run.finished_at is not None
    assert f"sent {bound + 1} times" in run.error and f"STAGE_MAX_REDELIVERIES={bound}" in run.error, run.error
    event.refresh_from_db()
    assert event.outcome == StageEvent.Outcome.ERROR and event.next_action == "FAIL" and event.detail["reaped"]
    assert queued_tasks(broker, "stages") == []  # not sent a last time
    assert not reap(t0 + 2 * _deadline("U8")).acted  # an ended run is left alone


def test_a_running_event_of_a_cancelled_run_is_closed(broker, specialist):
    run = _run(specialist, status=Run.Status.CANCELLED)
    event = _claimed(run, "U7", timezone.now())  # its worker died after the cancel

    assert reap().closed == 1

    event.refresh_from_db()
    assert event.outcome == StageEvent.Outcome.SKIPPED and event.finished_at is not None
    assert event.detail == {"why": "run cancelled", "reaped": True}
    assert not reap().acted
    assert queued_tasks(broker, "retrieval") == []


def test_a_second_delivery_within_the_hard_limit_is_left_alone(broker, specialist):
    t0 = timezone.now()
    run = _run(specialist)
    _sent(run, "U2", t0)
    event = _claimed(run, "U2", t0)

    execute_stage(str(run.pk), "U2", 1)  # the broker delivers the attempt again while its holder computes

    event.refresh_from_db()
    assert (event.outcome, event.deliveries, event.claimed_at) == (StageEvent.Outcome.RUNNING, 1, t0)
    assert StageEvent.objects.filter(run=run).count() == 1
    run.refresh_from_db()
    assert run.steps == 0 and run.status == Run.Status.RUNNING
    assert not reap().acted  # and the reaper does not send it again before the deadline either
    assert queued_tasks(broker, "stages") == []


def test_a_round_over_many_runs_waiting_in_a_busy_queue_is_a_few_reads(broker, specialist,
                                                                        django_assert_max_num_queries):
    """Under load most active runs wait their turn: a round must not lock and read each of them (it ran every
    REAPER_INTERVAL_S on a stage worker and, at 200 waiting runs, took that worker's whole time)."""
    t0 = timezone.now()
    for _ in range(50):
        _sent(_run(specialist), "U2", t0)
    send("other", "U2", 1)  # the queue is busy

    with django_assert_max_num_queries(4):
        assert not reap(t0 + 10 * _deadline("U2")).acted


def _request_ids(client, queue: str) -> list[str | None]:
    """The request id header of each message waiting in ``queue``, oldest first."""
    from lexery.logging import TASK_REQUEST_ID_HEADER

    return [json.loads(raw)["headers"].get(TASK_REQUEST_ID_HEADER) for raw in reversed(client.lrange(queue, 0, -1))]


def test_what_the_reaper_sends_carries_the_request_id_of_the_request_that_started_the_run(broker, specialist):
    # given a run started by request "req-7f3a", one stage stalled after its send and one outbox row never sent
    t0 = timezone.now()
    stalled = _run(specialist)
    Run.objects.filter(pk=stalled.pk).update(request_id="req-7f3a")
    _sent(stalled, "U4", t0)
    _claimed(stalled, "U4", t0)
    unsent = _run(specialist, status=Run.Status.QUEUED)
    Run.objects.filter(pk=unsent.pk).update(request_id="req-9b21")
    OutboxMessage.objects.create(run=unsent, stage="U1", attempt=1, queue="stages")
    # when the reaper acts on both, from beat (no request of its own)
    report = reap(t0 + _deadline("U4") + timedelta(seconds=1))
    # then each message carries its run's request id, as the stages it sends log it
    assert (report.sent, report.resent) == (1, 1)
    assert _request_ids(broker, "retrieval") == ["req-7f3a"]
    assert _request_ids(broker, "stages") == ["req-9b21"]


def test_a_run_created_through_the_api_keeps_the_request_id_it_was_created_under(api, specialist):
    response = api.post("/api/v1/runs", {"question": "Скільки днів відпустки?", "specialist": specialist.slug},
                        format="json", HTTP_X_REQUEST_ID="req-from-client")
    assert response.status_code == 202
    assert Run.objects.get(pk=response.json()["id"]).request_id == "req-from-client"
