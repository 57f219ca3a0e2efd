"""GET /api/v1/costs and the cost selectors behind it: an org's spend, grouped, windowed, and only its own."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any, cast

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from llm.models import CostLedgerEntry
from runs.cost_selectors import CostWindow, cost_daily_series, cost_for_run
from runs.models import Run
from tenancy.auth import api_key_create
from tenancy.models import Org, Specialist
from tests.factories import SpecialistFactory, org_create

DAY1, DAY2 = date(2026, 11, 2), date(2026, 11, 5)


def make_specialist(org: Org, slug: str) -> Specialist:
    return cast(Specialist, SpecialistFactory(org=org, slug=slug))


def entry(run: Run | None, when: date, *, stage: str = "U10", model: str = "gpt-4o-mini", usd: str = "0.001",
          prompt: int = 1000, cached: int = 0, status: str = "ok") -> CostLedgerEntry:
    row = CostLedgerEntry.objects.create(
        run=run, stage=stage, kind="chat", role="writer", provider="openai", model=model, prompt_tokens=prompt,
        completion_tokens=10, cached_tokens=cached, cost_usd=Decimal(usd), status=status,
        idempotency_key=f"k{CostLedgerEntry.objects.count()}")
    # created_at is set on insert; the report windows on it, so place each row on its day
    CostLedgerEntry.objects.filter(pk=row.pk).update(created_at=datetime(when.year, when.month, when.day, 12,
                                                                         tzinfo=UTC))
    return row


@pytest.fixture
def ledger(specialist: Specialist) -> dict[str, Any]:
    """Two specialists of the org and a stranger org, spending on two days."""
    other_sp = make_specialist(specialist.org, "family")
    labour = Run.objects.create(org=specialist.org, specialist=specialist, question="q1")
    family = Run.objects.create(org=specialist.org, specialist=other_sp, question="q2")
    stranger_org = org_create("stranger")
    stranger = Run.objects.create(org=stranger_org, specialist=make_specialist(stranger_org, "x"), question="q3")
    entry(labour, DAY1, usd="0.001", prompt=1000, cached=200)
    entry(labour, DAY1, stage="U9", model="gpt-4.1-mini", usd="0.0004", prompt=500)
    entry(family, DAY2, model="gpt-4o", usd="0.02", prompt=4000, status="downgraded")
    entry(stranger, DAY1, usd="9.99")  # another org's spend: never in this org's report
    entry(None, DAY1, usd="5")  # a call outside any run belongs to no org
    return {"labour": labour, "family": family, "stranger_org": stranger_org}


def report(api: APIClient, **params: str) -> Any:
    return api.get("/api/v1/costs", params)


@pytest.mark.django_db
def test_spend_by_model_is_the_orgs_own_most_expensive_first(api, ledger):
    response = report(api, **{"from": "2026-11-01", "to": "2026-11-30", "group_by": "model"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["from"], body["to"], body["group_by"], body["currency"]) == ("2026-11-01", "2026-11-30", "model",
                                                                              "USD")
    assert [(g["key"], g["provider"], g["calls"], Decimal(g["cost_usd"])) for g in body["groups"]] == [
        ("gpt-4o", "openai", 1, Decimal("0.02")), ("gpt-4o-mini", "openai", 1, Decimal("0.001")),
        ("gpt-4.1-mini", "openai", 1, Decimal("0.0004"))]
    assert body["totals"]["calls"] == 3 and Decimal(body["totals"]["cost_usd"]) == Decimal("0.0214")
    assert body["totals"]["prompt_tokens"] == 5500 and body["totals"]["cached_tokens"] == 200


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("group_by", "expected"),
    [
        ("day", [("2026-11-02", "0.0014"), ("2026-11-05", "0.02")]),
        ("specialist", [("family", "0.02"), ("labour", "0.0014")]),
        ("stage", [("U10", "0.021"), ("U9", "0.0004")]),
    ],
)
def test_spend_groups_by_day_specialist_and_stage(api, ledger, group_by, expected):
    body = report(api, **{"from": "2026-11-01", "to": "2026-11-30", "group_by": group_by}).json()
    assert [(g["key"], Decimal(g["cost_usd"])) for g in body["groups"]] == [(k, Decimal(v)) for k, v in expected]


@pytest.mark.django_db
def test_the_window_includes_both_days_and_nothing_outside(api, ledger):
    body = report(api, **{"from": "2026-11-05", "to": "2026-11-05"}).json()
    assert [(g["key"], g["calls"]) for g in body["groups"]] == [("2026-11-05", 1)]
    assert report(api, **{"from": "2026-11-03", "to": "2026-11-04"}).json()["groups"] == []


@pytest.mark.django_db
def test_without_a_window_the_last_thirty_days_are_reported_by_day(api, org):
    sp = make_specialist(org, "solo")
    run = Run.objects.create(org=org, specialist=sp, question="q")
    today = timezone.localdate()
    entry(run, today, usd="0.5")
    entry(run, today - timedelta(days=30), usd="0.7")  # one day before the default window

    body = report(api).json()

    assert (body["from"], body["to"], body["group_by"]) == ((today - timedelta(days=29)).isoformat(),
                                                            today.isoformat(), "day")
    assert [(g["key"], Decimal(g["cost_usd"])) for g in body["groups"]] == [(today.isoformat(), Decimal("0.5"))]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"group_by": "week"}, "group_by"),
        ({"from": "2026-13-01"}, "from"),
        ({"to": "yesterday"}, "to"),
        ({"from": "2026-11-05", "to": "2026-11-01"}, "from (2026-11-05) is after to (2026-11-01)"),
        ({"from": "2020-01-01", "to": "2026-11-01"}, "the limit is 366 (COSTS_MAX_RANGE_DAYS)"),
    ],
)
def test_bad_parameters_get_400_with_a_sentence(api, params, message):
    response = report(api, **params)
    assert response.status_code == 400
    assert message in response.json()["detail"]


@pytest.mark.django_db
def test_costs_need_an_api_key(ledger):
    assert APIClient().get("/api/v1/costs").status_code == 401


@pytest.mark.django_db
def test_the_stranger_org_sees_only_its_own_spend(ledger):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key_create(org=ledger['stranger_org'])}")
    body = client.get("/api/v1/costs", {"from": "2026-11-01", "to": "2026-11-30"}).json()
    assert Decimal(body["totals"]["cost_usd"]) == Decimal("9.99") and body["totals"]["calls"] == 1


@pytest.mark.django_db
def test_the_daily_series_for_a_chart_has_every_day_of_the_window(ledger, org: Org):
    series = cost_daily_series(org=org, window=CostWindow(date(2026, 11, 1), date(2026, 11, 6)))
    assert [s["key"] for s in series] == [f"2026-11-0{d}" for d in range(1, 7)]
    assert [Decimal(s["cost_usd"]) for s in series] == [0, Decimal("0.0014"), 0, 0, Decimal("0.02"), 0]


@pytest.mark.django_db
def test_a_runs_costs_count_downgraded_and_refused_calls_apart(ledger):
    entry(ledger["family"], DAY2, usd="0", status="capped")
    totals = cost_for_run(run=ledger["family"])
    assert totals["calls"] == 2 and totals["cost_usd"] == Decimal("0.02")
    assert totals["by_status"] == {"downgraded": 1, "capped": 1}


@pytest.mark.django_db
def test_the_openapi_schema_describes_the_cost_report(client):
    text = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").content.decode()
    assert "/api/v1/costs" in text and "group_by" in text
