"""Reads of the cost ledger for an org: totals and spend grouped by day, model, specialist or stage. The API and
the admin both call these; rows not bound to a run belong to no org and are never reported here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Count, F, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from llm.models import CostLedgerEntry
from runs.models import Run
from tenancy.models import Org

GROUPS = ("day", "model", "specialist", "stage")
# The group key as a database expression; "model" keeps the provider too: one name can be priced differently
# by two providers (a local server serving "gpt-4o-mini" costs nothing).
_GROUP_FIELDS: dict[str, dict[str, Any]] = {
    "day": {"key": TruncDate("created_at")},
    "model": {"key": F("model"), "group_provider": F("provider")},
    "specialist": {"key": F("run__specialist__slug")},
    "stage": {"key": F("stage")},
}
_SUMS = {"calls": Count("id"), "prompt_tokens": Sum("prompt_tokens"), "completion_tokens": Sum("completion_tokens"),
         "cached_tokens": Sum("cached_tokens"), "cost_usd": Sum("cost_usd")}


@dataclass(frozen=True)
class CostWindow:
    """Whole days, both ends included, in the project's time zone."""

    date_from: date
    date_to: date

    @property
    def start(self) -> datetime:
        return timezone.make_aware(datetime.combine(self.date_from, time.min))

    @property
    def end(self) -> datetime:
        return timezone.make_aware(datetime.combine(self.date_to + timedelta(days=1), time.min))


def ledger_for_org(*, org: Org, window: CostWindow | None = None) -> QuerySet[CostLedgerEntry]:
    rows = CostLedgerEntry.objects.filter(run__org=org)
    if window is not None:
        rows = rows.filter(created_at__gte=window.start, created_at__lt=window.end)
    return rows


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    return {"calls": row["calls"] or 0, "prompt_tokens": row["prompt_tokens"] or 0,
            "completion_tokens": row["completion_tokens"] or 0, "cached_tokens": row["cached_tokens"] or 0,
            "cost_usd": row["cost_usd"] or Decimal("0")}


def cost_totals(*, org: Org, window: CostWindow | None = None) -> dict[str, Any]:
    return _clean(ledger_for_org(org=org, window=window).aggregate(**_SUMS))


def cost_groups(*, org: Org, window: CostWindow, group_by: str) -> list[dict[str, Any]]:
    """One row per group, most expensive first (days in calendar order). ``key`` is a string in every grouping."""
    if group_by not in _GROUP_FIELDS:
        raise ValueError(f"group_by must be one of {', '.join(GROUPS)}, not {group_by!r}")
    fields = _GROUP_FIELDS[group_by]
    rows = (ledger_for_org(org=org, window=window).order_by().annotate(**fields)
            .values(*fields).annotate(**_SUMS))
    out = []
    for row in rows:
        key = row["key"]
        item = {"key": key.isoformat() if isinstance(key, date) else str(key or ""), **_clean(row)}
        if "group_provider" in fields:
            item["provider"] = row["group_provider"]
        out.append(item)
    if group_by == "day":
        return sorted(out, key=lambda r: r["key"])
    return sorted(out, key=lambda r: (-r["cost_usd"], r["key"]))


def cost_daily_series(*, org: Org, window: CostWindow) -> list[dict[str, Any]]:
    """Every day of the window, zero-filled: what a chart needs (the admin's small spend chart)."""
    by_day = {r["key"]: r for r in cost_groups(org=org, window=window, group_by="day")}
    days = (window.date_to - window.date_from).days + 1
    series = []
    for i in range(days):
        day = (window.date_from + timedelta(days=i)).isoformat()
        series.append(by_day.get(day) or {"key": day, **_clean(dict.fromkeys(_SUMS))})
    return series


def cost_for_run(*, run: Run) -> dict[str, Any]:
    """A run's totals, with the downgraded and refused calls counted apart (what the cap did to this run)."""
    rows = CostLedgerEntry.objects.filter(run=run)
    totals = _clean(rows.aggregate(**_SUMS))
    by_status = dict(rows.order_by().values_list("status").annotate(n=Count("id")))
    return {**totals, "by_status": by_status}
