"""What the run API costs in round trips on the production path (a broker, no in-process stages), pinned: the
API's throughput (issue 15, item 5; make bench) is mostly its queries. POST: the key, the specialist, one statement
for the run, its context and the U1 outbox row (engine/store.py ``open_run``) — its sent mark written later with
others in one statement, no read back, no cost sum for a run that has spent nothing. GET: the key, then the run
with its specialist, context and cost in one."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from llm.models import CostLedgerEntry
from runs.models import Run
from tenancy.models import Specialist
from tests.conftest import post_run

pytestmark = pytest.mark.django_db(transaction=True)  # real commits: the send after commit is part of the cost
QUESTION = "Скільки календарних днів триває щорічна основна відпустка?"
# key, specialist, the run with its context and outbox row (was 8: BEGIN, three INSERTs and COMMIT for the run, as
# the ORM path on other databases still does; then 4, the outbox row marked sent in the request)
POST_QUERIES = {"postgresql": 3}
POST_QUERIES_ORM = 8
# key, the run with its specialist, context and ledger sums
GET_QUERIES = 2


def _warm(api: APIClient) -> None:
    """A first request writes the new key's last_used_at (once per API_KEY_LAST_USED_RESOLUTION_S): not counted."""
    assert api.get("/api/v1/memory").status_code == 200


def test_creating_a_run_costs_a_fixed_number_of_queries(api: APIClient, specialist: Specialist, broker: Any,
                                                         django_assert_num_queries: Any) -> None:
    _warm(api)
    # A connection's first prepared statement also sets its plan mode (engine/store.py): once, not per request.
    assert post_run(api, question=QUESTION, specialist=specialist.slug).status_code == 202
    with django_assert_num_queries(POST_QUERIES.get(connection.vendor, POST_QUERIES_ORM)):
        created = post_run(api, question=QUESTION, specialist=specialist.slug)
    assert created.status_code == 202, created.content
    body = created.json()
    # the answer is the run as written, not an older or emptier copy
    run = Run.objects.get(pk=body["id"])
    assert (body["status"], body["question"], body["specialist"]) == ("queued", run.question, specialist.slug)
    assert body["cost"] == {"usd": "0.00000000", "prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0}
    assert body["created_at"] == run.created_at.isoformat() and body["limits"] == run.limits == {}


def test_reading_a_run_costs_a_fixed_number_of_queries_and_sums_its_cost(
        api: APIClient, specialist: Specialist, broker: Any, django_assert_num_queries: Any) -> None:
    _warm(api)
    run_id = post_run(api, question=QUESTION, specialist=specialist.slug).json()["id"]
    for n, usd in enumerate(["0.00120000", "0.00030000"], start=1):
        CostLedgerEntry.objects.create(run_id=run_id, stage="U10", call_ordinal=n,
                                       provider="openai", model="gpt-4o-mini", prompt_tokens=100 * n,
                                       completion_tokens=10 * n, cached_tokens=n, cost_usd=Decimal(usd),
                                       idempotency_key=f"{run_id}:{n}")
    with django_assert_num_queries(GET_QUERIES):
        got = api.get(f"/api/v1/runs/{run_id}")
    assert got.status_code == 200
    assert got.json()["cost"] == {"usd": "0.00150000", "prompt_tokens": 300, "completion_tokens": 30,
                                  "cached_tokens": 3}
