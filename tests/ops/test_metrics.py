"""/metrics: off by default, a bearer token when one is set, and the numbers computed from the database rows and the
Redis broker's queues at each scrape."""

from __future__ import annotations

import os
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
import redis
from celery import Celery
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from engine.models import OutboxMessage
from llm.models import CostLedgerEntry
from runs.models import Run, StageEvent
from tenancy.models import Specialist
from tests.support.loopback import closed_port

BROKER_URL = os.environ.get("E2E_BROKER_URL", "redis://127.0.0.1:6379/14")
TOKEN = "scrape-token-123"

pytestmark = pytest.mark.django_db


@pytest.fixture
def enabled(settings: Any) -> Any:
    settings.METRICS_ENABLED, settings.METRICS_TOKEN = True, ""
    return settings


def scrape(**headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = Client().get("/metrics", headers=headers)
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"].startswith("text/plain; version=")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(response.content.decode()) for s in family.samples}


def value(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def test_metrics_are_off_unless_enabled(settings: Any) -> None:
    settings.METRICS_ENABLED = False
    assert Client().get("/metrics").status_code == 404


def test_a_token_when_set_is_required(enabled: Any) -> None:
    enabled.METRICS_TOKEN = TOKEN
    assert Client().get("/metrics").status_code == 401
    assert Client().get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert Client().get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def _event(run: Run, stage: str, ms: int, *, attempt: int = 1, outcome: str = "ok", deliveries: int = 1,
           detail: dict[str, Any] | None = None) -> None:
    StageEvent.objects.create(run=run, stage=stage, attempt=attempt, started_at=timezone.now(), duration_ms=ms,
                              outcome=outcome, deliveries=deliveries, detail=detail or {})


def test_runs_latency_retries_redeliveries_reaper_and_spend_come_from_the_rows(
        enabled: Any, specialist: Specialist) -> None:
    # given two done runs, one failed by the reaper, one queued
    def run(status: str) -> Run:
        return Run.objects.create(org=specialist.org, specialist=specialist, question="q", status=status)

    done, done2, failed = run("done"), run("done"), run("failed")
    run("queued")
    _event(done, "U4", 40)
    _event(done, "U4", 300, attempt=2)  # a seeded rerun
    _event(done2, "U4", 7000, deliveries=3)  # a worker died twice under it
    _event(done, "U10", 1200)
    _event(failed, "U10", 190000, outcome="error", deliveries=4, detail={"reaped": True})
    OutboxMessage.objects.create(run=failed, stage="U10", attempt=1, queue="llm", sends=4, sent_at=timezone.now())
    OutboxMessage.objects.create(run=done, stage="U1", attempt=1, queue="stages")  # never sent
    for i, (model, usd) in enumerate([("gpt-4o-mini", "0.0012"), ("gpt-4o-mini", "0.0030"), ("gpt-4.1", "0.05")]):
        CostLedgerEntry.objects.create(run=done, stage="U10", provider="openai", model=model, cost_usd=Decimal(usd),
                                       prompt_tokens=100, completion_tokens=10, idempotency_key=f"k{i}")
    # when
    m = scrape()
    # then
    assert value(m, "lexery_runs", status="done") == 2
    assert value(m, "lexery_runs", status="queued") == 1 and value(m, "lexery_runs", status="cancelled") == 0
    u4 = {"stage": "U4", "outcome": "ok"}
    assert value(m, "lexery_stage_duration_seconds_bucket", **u4, le="0.05") == 1
    assert value(m, "lexery_stage_duration_seconds_bucket", **u4, le="0.5") == 2
    assert value(m, "lexery_stage_duration_seconds_bucket", **u4, le="+Inf") == 3
    assert value(m, "lexery_stage_duration_seconds_count", **u4) == 3
    assert value(m, "lexery_stage_duration_seconds_sum", **u4) == pytest.approx(7.34)
    assert value(m, "lexery_stage_duration_seconds_bucket", stage="U10", outcome="error", le="180.0") == 0
    assert value(m, "lexery_stage_retries_total", stage="U4") == 1
    assert value(m, "lexery_stage_redeliveries_total", stage="U4") == 2
    assert value(m, "lexery_stage_redeliveries_total", stage="U10") == 3
    assert value(m, "lexery_reaper_closed_attempts_total", outcome="error") == 1
    assert value(m, "lexery_outbox_resends_total", stage="U10") == 3
    assert value(m, "lexery_outbox_unsent") == 1
    assert value(m, "lexery_model_spend_usd_total", provider="openai", model="gpt-4o-mini") == pytest.approx(0.0042)
    assert value(m, "lexery_model_calls_total", provider="openai", model="gpt-4.1", status="ok") == 1
    assert value(m, "lexery_model_tokens_total", provider="openai", model="gpt-4o-mini", kind="prompt") == 200
    assert value(m, "lexery_metrics_source_errors", source="stage_events") == 0


def test_queue_depth_per_celery_queue_on_redis(enabled: Any) -> None:
    # given three stage messages waiting on the retrieval queue and one on llm, no worker consuming
    redis.Redis.from_url(BROKER_URL).flushdb()
    enabled.CELERY_BROKER_URL, enabled.CELERY_TASK_ALWAYS_EAGER = BROKER_URL, False
    sender = Celery(broker=BROKER_URL, set_as_current=False)  # the project's app stays the current one
    try:
        for _ in range(3):
            sender.send_task("engine.stage.U4", args=["run", "U4", 1], queue="retrieval")
        sender.send_task("engine.stage.U10", args=["run", "U10", 1], queue="llm")
        # when
        m = scrape()
    finally:
        sender.close()
        redis.Redis.from_url(BROKER_URL).flushdb()
    # then
    assert value(m, "lexery_queue_depth", queue="retrieval") == 3
    assert value(m, "lexery_queue_depth", queue="llm") == 1
    assert value(m, "lexery_queue_depth", queue="stages") == 0
    assert value(m, "lexery_queue_unacked") == 0


def test_a_broker_that_is_down_costs_its_metrics_not_the_scrape(enabled: Any) -> None:
    enabled.CELERY_BROKER_URL, enabled.CELERY_TASK_ALWAYS_EAGER = f"redis://127.0.0.1:{closed_port()}/0", False
    enabled.METRICS_BROKER_TIMEOUT_S = 0.5
    m = scrape()
    assert value(m, "lexery_metrics_source_errors", source="broker") == 1
    assert value(m, "lexery_metrics_source_errors", source="runs") == 0
    assert not any(name == "lexery_queue_depth" for name, _ in m)


def test_no_queue_depth_without_a_broker(enabled: Any) -> None:
    enabled.CELERY_TASK_ALWAYS_EAGER = True
    m = scrape()
    assert not any(name == "lexery_queue_depth" for name, _ in m)
    assert value(m, "lexery_metrics_source_errors", source="broker") == 0


def test_old_and_new_rows_count_alike(enabled: Any, specialist: Specialist) -> None:
    """Counters are totals over the rows, not a window: an old event still counts."""
    run = Run.objects.create(org=specialist.org, specialist=specialist, question="q", status="done")
    StageEvent.objects.create(run=run, stage="U2", started_at=timezone.now() - timedelta(days=90), duration_ms=3,
                              outcome="ok")
    assert value(scrape(), "lexery_stage_duration_seconds_count", stage="U2", outcome="ok") == 1
