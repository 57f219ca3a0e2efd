"""Prometheus metrics, computed from the database (and the broker) at each scrape.

Why from the rows and not counters kept in memory: stages run in Celery worker processes — prefork children that are
replaced every WORKER_MAX_TASKS_PER_CHILD tasks, on several machines — while /metrics is answered by a web process.
Counters in memory would live where no scrape sees them (or need an exporter per worker and a shared multiprocess
directory) and would restart at zero with every child. Every stage attempt already leaves a StageEvent with its
duration, attempt, deliveries and reaper marks, and every model call a ledger row: the rows are exact, shared by
all processes and survive restarts. A scrape costs one grouped query per table (bounded by the run purge).

Counters are recomputed sums, so they fall when the purge deletes events: Prometheus reads a fall as a counter
reset, which ``rate()`` handles. To add a metric, add a function to ``SOURCES``; each runs in its own savepoint, and
one that fails is counted in ``lexery_metrics_source_errors`` instead of failing the scrape.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Q, Sum
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from engine.models import OutboxMessage
from engine.specs import ALL_QUEUES
from llm.models import CostLedgerEntry
from ops.readiness import broker_url
from runs.models import Run, StageEvent

logger = logging.getLogger(__name__)

# Stage durations run from a millisecond (U5) to the writer's minutes (STAGE_TIME_LIMIT_S, 180 s).
LATENCY_BUCKETS_MS = (5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 120000, 180000)
# kombu's Redis transport keeps a queue's messages of priority 3/6/9 in lists of their own beside the queue's.
_PRIORITY_SUFFIXES = ("", "\x06\x163", "\x06\x166", "\x06\x169")


def runs_by_status() -> Iterator[Metric]:
    gauge = GaugeMetricFamily("lexery_runs", "Runs in the database by status.", labels=["status"])
    counts = dict(Run.objects.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
    for status in Run.Status.values:
        gauge.add_metric([status], counts.get(status, 0))
    yield gauge


def _bucket_counts() -> dict[str, Count]:
    return {f"le_{ms}": Count("pk", filter=Q(duration_ms__lte=ms)) for ms in LATENCY_BUCKETS_MS}


def stage_events() -> Iterator[Metric]:
    """Latency histograms by stage and outcome, and the retries, redeliveries and reaper marks, in one scan."""
    rows = (StageEvent.objects.values("stage", "outcome")
            .annotate(n=Count("pk", filter=Q(duration_ms__isnull=False)), sum_ms=Sum("duration_ms"),
                      retries=Count("pk", filter=Q(attempt__gt=1)),
                      redeliveries=Sum(F("deliveries") - 1, filter=Q(deliveries__gt=1)),
                      reaped=Count("pk", filter=Q(detail__reaped=True)), **_bucket_counts())
            .order_by("stage", "outcome"))
    latency = HistogramMetricFamily("lexery_stage_duration_seconds",
                                    "Stage attempt durations (StageEvent.duration_ms), by stage and outcome.",
                                    labels=["stage", "outcome"])
    retries = CounterMetricFamily("lexery_stage_retries", "Stage attempts after the first (seeded reruns, "
                                  "write retries), by stage.", labels=["stage"])
    redeliveries = CounterMetricFamily("lexery_stage_redeliveries", "Extra deliveries of one stage attempt "
                                       "(a worker died, the reaper re-sent it), by stage.", labels=["stage"])
    reaped = CounterMetricFamily("lexery_reaper_closed_attempts", "Stage attempts the reaper ended: error (the run "
                                 "failed after too many deliveries) or skipped (its run had ended).",
                                 labels=["outcome"])
    by_stage: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_outcome: dict[str, int] = defaultdict(int)
    for typed_row in rows:
        row: dict[str, Any] = dict(typed_row)  # the bucket keys are built, not literal
        if row["n"]:
            buckets = [(str(ms / 1000), row[f"le_{ms}"]) for ms in LATENCY_BUCKETS_MS] + [("+Inf", row["n"])]
            latency.add_metric([row["stage"], row["outcome"]], buckets, sum_value=(row["sum_ms"] or 0) / 1000)
        by_stage[row["stage"]][0] += row["retries"]
        by_stage[row["stage"]][1] += row["redeliveries"] or 0
        by_outcome[row["outcome"]] += row["reaped"]
    for stage, (n_retries, n_redeliveries) in sorted(by_stage.items()):
        retries.add_metric([stage], n_retries)
        redeliveries.add_metric([stage], n_redeliveries)
    for outcome, n in sorted(by_outcome.items()):
        if n:
            reaped.add_metric([outcome], n)
    yield from (latency, retries, redeliveries, reaped)


def outbox() -> Iterator[Metric]:
    resends = CounterMetricFamily("lexery_outbox_resends", "Stage messages handed to the broker again after the "
                                  "first send (the reaper re-sending stalled attempts), by stage.", labels=["stage"])
    unsent = GaugeMetricFamily("lexery_outbox_unsent", "Stage messages decided but not yet handed to the broker "
                               "(the broker was down; the reaper sends them), or sent less than "
                               "OUTBOX_SENT_MARK_DELAY_S ago by a stage worker that has not marked them yet.")
    # Both in one pass over the table: sent_at has no index (engine/models.py: the sent mark is a HOT update), so
    # the unsent count on its own would be a second full scan beside the resends'.
    n_unsent = 0
    for stage, n_resent, n_stage_unsent in (
            OutboxMessage.objects.values_list("stage")
            .annotate(resent=Sum(F("sends") - 1, filter=Q(sends__gt=1)), unsent=Count("pk", filter=Q(sent_at=None)))
            .values_list("stage", "resent", "unsent").order_by("stage")):
        if n_resent is not None:
            resends.add_metric([stage], n_resent)
        n_unsent += n_stage_unsent
    unsent.add_metric([], n_unsent)
    yield from (resends, unsent)


def model_spend() -> Iterator[Metric]:
    rows = (CostLedgerEntry.objects.values("provider", "model", "status")
            .annotate(calls=Count("pk"), usd=Sum("cost_usd"), prompt=Sum("prompt_tokens"),
                      completion=Sum("completion_tokens"), cached=Sum("cached_tokens"))
            .order_by("provider", "model", "status"))
    spend = CounterMetricFamily("lexery_model_spend_usd", "Model spend in USD (the cost ledger), by model.",
                                labels=["provider", "model"])
    calls = CounterMetricFamily("lexery_model_calls", "Model calls (ledger rows) by model and status.",
                                labels=["provider", "model", "status"])
    tokens = CounterMetricFamily("lexery_model_tokens", "Tokens by model and kind (prompt, completion, cached).",
                                 labels=["provider", "model", "kind"])
    usd: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    counted: dict[tuple[str, str, str], int] = defaultdict(int)
    for row in rows:
        key = (row["provider"], row["model"])
        usd[key] += row["usd"] or Decimal(0)
        calls.add_metric([*key, row["status"]], row["calls"])
        for kind in ("prompt", "completion", "cached"):
            counted[(*key, kind)] += row[kind] or 0
    for key, value in sorted(usd.items()):
        spend.add_metric(list(key), float(value))
    for token_key, n in sorted(counted.items()):
        tokens.add_metric(list(token_key), n)
    yield from (spend, calls, tokens)


def queue_depth() -> Iterator[Metric]:
    """Messages waiting per Celery queue, and delivered but unacknowledged ones, when the broker is Redis."""
    url = broker_url()
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return
    import redis

    timeout = settings.METRICS_BROKER_TIMEOUT_S
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        pipe = client.pipeline(transaction=False)
        for queue in ALL_QUEUES:
            for suffix in _PRIORITY_SUFFIXES:
                pipe.llen(queue + suffix)
        pipe.hlen("unacked")
        lengths = pipe.execute()
    finally:
        client.close()
    depth = GaugeMetricFamily("lexery_queue_depth", "Messages waiting in each Celery queue (Redis).",
                              labels=["queue"])
    step = len(_PRIORITY_SUFFIXES)
    for i, queue in enumerate(ALL_QUEUES):
        depth.add_metric([queue], sum(lengths[i * step:(i + 1) * step]))
    unacked = GaugeMetricFamily("lexery_queue_unacked", "Messages delivered to a worker and not yet acknowledged.")
    unacked.add_metric([], lengths[-1])
    yield from (depth, unacked)


SOURCES: dict[str, Callable[[], Iterable[Metric]]] = {
    "runs": runs_by_status,
    "stage_events": stage_events,
    "outbox": outbox,
    "ledger": model_spend,
    "broker": queue_depth,
}


class LexeryCollector(Collector):
    def __init__(self, sources: dict[str, Callable[[], Iterable[Metric]]] | None = None) -> None:
        self.sources = sources or SOURCES

    def collect(self) -> Iterator[Metric]:
        errors = GaugeMetricFamily("lexery_metrics_source_errors", "1 when a source of this scrape failed (see the "
                                   "log), else 0.", labels=["source"])
        with transaction.atomic():
            if connection.vendor == "postgresql":  # a slow scrape is cut off, never left running
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL statement_timeout = %s", [int(settings.METRICS_DB_TIMEOUT_S * 1000)])
            for name, source in self.sources.items():
                try:
                    with transaction.atomic():  # a savepoint: a failed query does not poison the next source
                        metrics = list(source())
                except Exception as exc:  # a metric missing from one scrape beats a scrape that fails whole
                    logger.warning("metrics source failed", extra={"source": name,
                                                                   "error": f"{type(exc).__name__}: {exc}"[:300]})
                    errors.add_metric([name], 1)
                    continue
                errors.add_metric([name], 0)
                yield from metrics
        yield errors


def render() -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LexeryCollector())
    return generate_latest(registry)
