"""Reads for the operators' dashboard: runs per day by status, stage latency percentiles, spend per day by model,
over a window of ``ADMIN_DASHBOARD_DAYS`` days."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db.models import Count, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from console.charts import percentile
from llm.models import CostLedgerEntry
from orch.policy import STAGES
from runs.models import Run, StageEvent


def dashboard_window(*, days: int | None = None, now: datetime | None = None) -> tuple[datetime, list[date]]:
    days = max(1, min(days or settings.ADMIN_DASHBOARD_DAYS, settings.ADMIN_DASHBOARD_DAYS_MAX))
    today = (now or timezone.now()).date()
    first = today - timedelta(days=days - 1)
    since = timezone.make_aware(datetime.combine(first, datetime.min.time()), timezone.get_current_timezone())
    return since, [first + timedelta(days=i) for i in range(days)]


def runs_per_day_by_status(*, since: datetime, days: list[date]) -> dict[str, list[float]]:
    counts: dict[str, dict[date, int]] = defaultdict(dict)
    rows = (Run.objects.filter(created_at__gte=since).annotate(day=TruncDate("created_at"))
            .values("day", "status").annotate(n=Count("id")))
    for row in rows:
        counts[row["status"]][row["day"]] = row["n"]
    order = [s for s in Run.Status.values if s in counts]
    return {status: [float(counts[status].get(d, 0)) for d in days] for status in order}


def stage_latency(*, since: datetime) -> list[tuple[str, float, float, int]]:
    """(stage, p50 ms, p95 ms, n) over the newest finished stage runs in the window, at most
    ``ADMIN_DASHBOARD_MAX_EVENTS`` of them (percentiles need the values, and SQLite has no percentile_cont)."""
    values: dict[str, list[float]] = defaultdict(list)
    rows = (StageEvent.objects.filter(started_at__gte=since, duration_ms__isnull=False)
            .order_by("-started_at").values_list("stage", "duration_ms")[:settings.ADMIN_DASHBOARD_MAX_EVENTS])
    for stage, ms in rows:
        values[stage].append(float(ms or 0))
    out = []
    for stage in STAGES:
        if values.get(stage):
            ordered = sorted(values[stage])
            out.append((stage, percentile(ordered, 50), percentile(ordered, 95), len(ordered)))
    return out


def spend_per_day_by_model(*, since: datetime, days: list[date]) -> tuple[dict[str, list[float]], list[dict[str, Any]]]:
    """USD per day and model for the chart, and per-model totals (calls and tokens too: offline calls cost $0)."""
    per_day: dict[str, dict[date, Decimal]] = defaultdict(dict)
    rows = (CostLedgerEntry.objects.filter(created_at__gte=since).annotate(day=TruncDate("created_at"))
            .values("day", "provider", "model").annotate(usd=Sum("cost_usd")))
    for row in rows:
        per_day[f"{row['provider']}/{row['model']}"][row["day"]] = row["usd"] or Decimal(0)
    series = {m: [float(per_day[m].get(d, 0)) for d in days] for m in sorted(per_day)}
    totals = [dict(row) for row in
        CostLedgerEntry.objects.filter(created_at__gte=since).values("provider", "model")
        .annotate(calls=Count("id"), usd=Sum("cost_usd"), prompt_tokens=Sum("prompt_tokens"),
                  completion_tokens=Sum("completion_tokens")).order_by("-usd", "model")]
    return series, totals
