"""Issue 12, item 3: requests per API key on a shared Redis cache (429 + Retry-After), per-org caps on stored
documents and memory items, and a per-org daily spend cap enforced by the LLM gateway."""

from __future__ import annotations

import os
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.cache import caches
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from rest_framework.test import APIClient

from llm.budget import CostCapExceeded, OrgSpendCapExceeded
from llm.models import CostLedgerEntry
from llm.types import Message
from runs.models import Run
from tenancy.auth import api_key_create
from tests.llm.test_gateway import gateway, server  # noqa: F401  (the fake OpenAI server fixture: priced calls)

# Redis DB 10 is this suite's throttling cache (a shared machine: other suites use other DBs).
THROTTLE_REDIS = os.environ.get("THROTTLE_TEST_REDIS_URL", "redis://127.0.0.1:6379/10")
MESSAGES = [Message("system", "Ти юридичний помічник."), Message("user", "Питання: Скільки днів відпустки?")]


@pytest.fixture
def redis_throttle(settings):
    settings.CACHES = {**settings.CACHES, "throttle": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                                       "LOCATION": THROTTLE_REDIS}}
    caches["throttle"].clear()
    yield caches["throttle"]
    caches["throttle"].clear()


@pytest.mark.django_db
def test_a_key_past_its_rate_gets_429_with_retry_after_and_another_key_does_not(org, redis_throttle, settings):
    settings.API_THROTTLE_RATE = "3/minute"
    first, second = APIClient(), APIClient()
    first.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key_create(org=org)}")
    second.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key_create(org=org)}")

    statuses = [first.get("/api/v1/memory").status_code for _ in range(4)]
    refused = first.get("/api/v1/memory")

    assert statuses == [200, 200, 200, 429]
    assert refused.json()["code"] == "throttled" and 0 < int(refused["Retry-After"]) <= 60
    assert second.get("/api/v1/memory").status_code == 200  # per key, not per org or per process
    assert any(k.startswith(b":1:throttle:api_key:key:") for k in redis_throttle._cache.get_client().keys("*"))


@pytest.mark.django_db
def test_an_org_at_its_memory_cap_gets_409_and_stores_nothing(api, specialist, settings):
    settings.ORG_MAX_MEMORY_ITEMS = 2
    for text in ("Перший факт.", "Другий факт."):
        assert api.post("/api/v1/memory", {"user_ref": "u1", "text": text}, format="json").status_code == 201

    refused = api.post("/api/v1/memory", {"user_ref": "u2", "text": "Третій факт."}, format="json")

    assert refused.status_code == 409 and refused.json()["code"] == "quota_exceeded"
    assert "(ORG_MAX_MEMORY_ITEMS)" in refused.json()["detail"]


@pytest.mark.django_db
def test_an_org_at_its_document_cap_gets_409_and_stores_nothing(api, specialist, settings,
                                                              django_capture_on_commit_callbacks):
    settings.ORG_MAX_DOCUMENTS = 1

    def upload(name: str) -> int:
        with django_capture_on_commit_callbacks(execute=True):
            file = SimpleUploadedFile(name, "Договір оренди.".encode(), "text/plain")
            return api.post("/api/v1/documents", {"file": file, "user_ref": "u1"}, format="multipart").status_code

    assert upload("a.txt") == 202
    assert upload("b.txt") == 409


@pytest.mark.django_db
def test_the_gateway_refuses_a_call_past_the_orgs_daily_spend_and_counts_only_today(specialist, settings,
                                                                                    server):  # noqa: F811
    settings.ORG_DAILY_SPEND_CAP_USD = "1.00"
    earlier = Run.objects.create(org=specialist.org, specialist=specialist, question="раніше")
    spent = CostLedgerEntry.objects.create(run=earlier, stage="U10", attempt=1, role="writer", call_ordinal=1,
                                           idempotency_key="k-today", provider="openai", model="gpt-4o",
                                           cost_usd=Decimal("0.99999"), status="ok")
    run = Run.objects.create(org=specialist.org, specialist=specialist, question="Скільки днів відпустки?")

    with pytest.raises(OrgSpendCapExceeded) as caught:
        gateway(run, "U10", 1).complete(role="writer", messages=MESSAGES, max_tokens=200,
                                                   model="gpt-4o")

    assert isinstance(caught.value, CostCapExceeded)
    assert "org daily spend cap 1.000000 USD (ORG_DAILY_SPEND_CAP_USD)" in str(caught.value)
    assert CostLedgerEntry.objects.get(run=run).status == "capped" and server.requests == []
    # yesterday's spend is not today's
    CostLedgerEntry.objects.filter(pk=spent.pk).update(created_at=timezone.now() - timedelta(days=2))
    server.script([{"reply": "24 дні (КЗпП ст. 75).", "usage": {"prompt_tokens": 30, "completion_tokens": 9}}])
    gateway(run, "U10", 2).complete(role="writer", messages=MESSAGES, max_tokens=200, model="gpt-4o")
