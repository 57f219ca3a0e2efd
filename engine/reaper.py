"""The reaper (Celery beat, every REAPER_INTERVAL_S): nothing the engine decided to run is lost.

- An outbox row still unsent OUTBOX_SEND_GRACE_S after its commit (the broker was down, the process died between
  commit and send) is sent.
- An active run whose current attempt made no progress for its stage's hard limit plus REAPER_GRACE_S (the message
  was lost with a flushed broker, the worker was killed, the hard limit killed the stage) has that attempt sent
  again; after STAGE_MAX_REDELIVERIES re-sends the run fails with a reason that says so. An attempt no worker has
  claimed yet is re-sent only when its queue is empty: while the queue holds messages it may simply be waiting its
  turn (a backlog longer than the deadline is load, not loss — re-sending it would fail busy runs).
- A stage event still ``running`` on a run that has ended (cancelled while its worker died) is closed as skipped.

Every action is idempotent with the shell's claim: a re-sent attempt that finished meanwhile is ignored there."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone
from kombu.exceptions import ChannelError

from engine.dispatch import send_recorded
from engine.models import OutboxMessage
from engine.specs import STAGE_SPECS, spec
from lexery.logging import bind_request
from runs.models import Run, StageEvent

logger = logging.getLogger(__name__)
ACTIVE = (Run.Status.QUEUED, Run.Status.RUNNING)


@dataclass(frozen=True)
class ReapReport:
    sent: int = 0  # unsent outbox rows handed to the broker
    resent: int = 0  # stalled attempts sent again
    failed: int = 0  # runs failed after too many sends
    closed: int = 0  # running events of ended runs closed

    @property
    def acted(self) -> bool:
        return bool(self.sent or self.resent or self.failed or self.closed)


def reap(now: datetime | None = None) -> ReapReport:
    now = now or timezone.now()
    report = ReapReport(sent=_send_unsent(now), **_resend_stalled(now), closed=_close_orphans())
    if report.acted:
        logger.warning("reaper acted", extra={"sent": report.sent, "resent": report.resent,
                                              "failed": report.failed, "closed": report.closed})
    return report


def _send_unsent(now: datetime) -> int:
    cutoff = now - timedelta(seconds=settings.OUTBOX_SEND_GRACE_S)
    rows = (OutboxMessage.objects.filter(sent_at__isnull=True, created_at__lt=cutoff, run__status__in=ACTIVE)
            .annotate(request_id=F("run__request_id")).order_by("id")[:settings.REAPER_BATCH_MAX])
    sent = 0
    for row in rows:
        if not _send_for_run(str(row.run_id), row.stage, row.attempt, row.request_id):
            break  # the broker is still down: the next round tries again
        sent += 1
    return sent


def _send_for_run(run_id: str, stage: str, attempt: int, request_id: str) -> bool:
    """Send as the request that started the run: the reaper has no request of its own, and lexery/celery.py puts
    the bound id on the message, so the re-sent stage logs the run's request id like every other stage."""
    with bind_request(request_id or "-"):
        return send_recorded(run_id, stage, attempt)


def _deadline(stage: str) -> timedelta:
    return timedelta(seconds=spec(stage).hard_limit_s + settings.REAPER_GRACE_S)


class QueueDepths:
    """Messages waiting in each stage queue, asked of the broker once per round and only if needed."""

    def __init__(self) -> None:
        self._depths: dict[str, int | None] | None = None

    def empty(self, queue: str) -> bool:
        """True only when the broker says nothing waits in ``queue`` (unknown counts as not empty)."""
        if self._depths is None:
            self._depths = _queue_depths()
        return self._depths.get(queue) == 0


def _queue_depths() -> dict[str, int | None]:
    queues = {s.queue for s in STAGE_SPECS.values()}
    try:
        with current_app.connection_for_read() as conn:
            conn.ensure_connection(max_retries=1)
            with conn.channel() as channel:
                return {q: _depth(channel, q) for q in queues}
    except Exception as exc:  # the broker is down: nothing can be sent this round anyway
        logger.warning("reaper could not read the queues", extra={"error": f"{type(exc).__name__}: {exc}"[:300]})
        return dict.fromkeys(queues)


def _depth(channel: Any, queue: str) -> int:
    try:
        return int(channel.queue_declare(queue=queue, passive=True).message_count)
    except ChannelError:  # no such queue (a flushed Redis): nothing waits in it
        return 0


def _resend_stalled(now: datetime) -> dict[str, int]:
    counts = {"resent": 0, "failed": 0}
    depths = QueueDepths()
    for run_id in _stalled_candidates(now, depths):
        outcome = _reap_run(run_id, now, depths)
        if outcome:
            counts[outcome] += 1
    return counts


def _stalled_candidates(now: datetime, depths: QueueDepths) -> list[str]:
    """Runs whose current attempt may have stalled, in two reads without locks (``_reap_run`` checks each again
    under the run's lock): a claimed attempt still running past the shortest deadline, and an attempt sent past it
    that no worker claimed, whose queue is empty. Runs merely waiting in a busy queue cost nothing here."""
    cutoff = now - min(_deadline(s) for s in STAGE_SPECS)
    claimed = (StageEvent.objects.filter(outcome=StageEvent.Outcome.RUNNING, run__status__in=ACTIVE)
               .filter(Q(claimed_at__lt=cutoff) | Q(claimed_at__isnull=True, started_at__lt=cutoff))
               .values_list("run_id", flat=True)[:settings.REAPER_BATCH_MAX])
    attempt_claimed = StageEvent.objects.filter(run_id=OuterRef("run_id"), stage=OuterRef("stage"),
                                                attempt=OuterRef("attempt"))
    unclaimed = (OutboxMessage.objects.filter(run__status__in=ACTIVE, sent_at__lt=cutoff)
                 .exclude(Exists(attempt_claimed)).values_list("run_id", "queue")[:settings.REAPER_BATCH_MAX])
    runs = [str(r) for r in claimed] + [str(r) for r, queue in unclaimed if depths.empty(queue)]
    return list(dict.fromkeys(runs))[:settings.REAPER_BATCH_MAX]


def _reap_run(run_id: str, now: datetime, depths: QueueDepths) -> str | None:
    """Look at one run's current attempt (its latest outbox row) under the run's lock; act if it stalled."""
    with transaction.atomic():
        run = Run.objects.select_for_update().filter(pk=run_id, status__in=ACTIVE).first()
        message = OutboxMessage.objects.filter(run_id=run_id).order_by("-id").first()
        if run is None or message is None or message.sent_at is None:  # unsent rows are _send_unsent's
            return None
        event = StageEvent.objects.filter(run=run, stage=message.stage, attempt=message.attempt).first()
        if event is not None and event.outcome != StageEvent.Outcome.RUNNING:
            return None
        last = max(message.sent_at, event.claimed_at or event.started_at) if event else message.sent_at
        if now - last < _deadline(message.stage):
            return None
        if event is None and not depths.empty(message.queue):  # unclaimed: it may still wait in the queue
            return None
        if message.sends > spec(message.stage).max_redeliveries:
            _fail_stalled(run, message, event)
            return "failed"
    logger.warning("stage attempt stalled; sending it again", extra={
        "run_id": run_id, "stage": message.stage, "attempt": message.attempt, "sends": message.sends,
        "claimed": event is not None})
    return "resent" if _send_for_run(run_id, message.stage, message.attempt, run.request_id) else None


def _fail_stalled(run: Run, message: OutboxMessage, event: StageEvent | None) -> None:
    reason = (f"{message.stage} attempt {message.attempt} was sent {message.sends} times and never finished "
              f"(STAGE_MAX_REDELIVERIES={spec(message.stage).max_redeliveries})")
    now = timezone.now()
    if event is not None:
        event.outcome, event.finished_at, event.next_action = StageEvent.Outcome.ERROR, now, "FAIL"
        event.reason, event.detail = reason[:300], {**event.detail, "error": reason, "reaped": True}
        event.save(update_fields=["outcome", "finished_at", "next_action", "reason", "detail"])
    run.status, run.error, run.finished_at = Run.Status.FAILED, reason, now
    run.save(update_fields=["status", "error", "finished_at", "updated_at"])
    logger.error("run failed by the reaper", extra={"run_id": str(run.pk), "stage": message.stage,
                                                     "reason": reason})


def _close_orphans() -> int:
    events = (StageEvent.objects.filter(outcome=StageEvent.Outcome.RUNNING, run__status__in=Run.TERMINAL)
              .select_related("run")[:settings.REAPER_BATCH_MAX])
    closed = 0
    for event in events:
        event.outcome, event.finished_at = StageEvent.Outcome.SKIPPED, timezone.now()
        event.detail = {**event.detail, "why": f"run {event.run.status}", "reaped": True}
        event.save(update_fields=["outcome", "finished_at", "detail"])
        closed += 1
    return closed
