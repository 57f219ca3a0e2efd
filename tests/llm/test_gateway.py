"""The LLM gateway (llm/gateway.py): one ledger row per call with the provider's usage priced from the versioned
table, per-role models, the per-run cost cap (downgrade or refuse, never overspend), embedding rows, and a row of
its own for every call a redelivered stage sends again (issue 11)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from llm.budget import CostCapExceeded, OrgSpendCapExceeded
from llm.gateway import LlmGateway, record_embedding_call
from llm.models import CostLedgerEntry
from llm.pricing import PRICE_VERSION, PRICES
from llm.routing import UnknownRole
from llm.tokenizer import count_tokens
from llm.types import ProviderError
from pipeline.messages import Message
from runs.models import Run
from runs.selectors import run_cost, run_spend_caps
from tenancy.models import Specialist
from tests.support.openai_server import FakeOpenAIServer, openai_gateway

MESSAGES = [Message("system", "Ти юридичний помічник."), Message("user", "Питання: Скільки днів відпустки?")]
USAGE = {"prompt_tokens": 3000, "completion_tokens": 40, "prompt_tokens_details": {"cached_tokens": 1024}}


@pytest.fixture
def server(settings: Any) -> Iterator[FakeOpenAIServer]:
    with openai_gateway(settings, max_retries=1, api_key=None) as fake:
        yield fake


@pytest.fixture
def run(specialist: Specialist) -> Run:
    return Run.objects.create(org=specialist.org, specialist=specialist, question="Скільки днів відпустки?")


def gateway(run: Run, stage: str, attempt: int, *, delivery: int = 1) -> LlmGateway:
    """The gateway as the engine makes one for a delivery of a stage attempt: with the run's caps."""
    return LlmGateway(str(run.id), stage, attempt, caps=run_spend_caps(run=run), delivery=delivery)


def rows(run: Run) -> list[CostLedgerEntry]:
    return list(CostLedgerEntry.objects.filter(run=run).order_by("id"))


@pytest.mark.django_db
def test_a_call_leaves_one_row_with_the_servers_usage_and_cached_input_priced_apart(server, run):
    server.script([{"reply": "24 дні (КЗпП ст. 75).", "usage": USAGE}])

    completion = gateway(run, "U10", 1).complete(role="writer", messages=MESSAGES, max_tokens=200)

    (row,) = rows(run)
    price = PRICES["gpt-4o-mini"]
    expected = (price.input * (3000 - 1024) + price.cached_input * 1024 + price.output * 40) / Decimal(1_000_000)
    assert completion.text == "24 дні (КЗпП ст. 75)."
    assert (row.provider, row.model, row.role, row.kind, row.status) == ("openai", "gpt-4o-mini", "writer", "chat",
                                                                          "ok")
    assert (row.prompt_tokens, row.completion_tokens, row.cached_tokens) == (3000, 40, 1024)
    assert row.cost_usd == expected == Decimal("0.0003972")
    assert row.price_version == PRICE_VERSION
    assert row.idempotency_key == f"{run.id}:U10:1:writer:1"


@pytest.mark.django_db
def test_usage_missing_from_the_reply_is_counted_with_the_real_tokenizer(server, run):
    server.script([{"reply": "Не менш як 24 календарні дні.", "usage": None}])

    gateway(run, "U10", 1).complete(role="writer", messages=MESSAGES, max_tokens=200)

    (row,) = rows(run)
    assert row.prompt_tokens == sum(count_tokens(m.content, "gpt-4o-mini") for m in MESSAGES)
    assert row.completion_tokens == count_tokens("Не менш як 24 календарні дні.", "gpt-4o-mini")
    assert row.cost_usd > 0


@pytest.mark.django_db
def test_a_redelivered_attempt_finds_its_rows_and_a_second_role_gets_its_own(server, run):
    server.default_behaviour = {"reply": "Так.", "usage": USAGE}
    gateway(run, "U11", 1).complete(role="writer", messages=MESSAGES, max_tokens=50)
    # ORCH consults its own model after the same attempt, through its own gateway
    gateway(run, "U11", 1).complete(role="orch", model="gpt-4o-mini", messages=MESSAGES, max_tokens=5)

    gateway(run, "U11", 1).complete(role="writer", messages=MESSAGES, max_tokens=50)  # redelivered

    assert [(r.role, r.call_ordinal) for r in rows(run)] == [("writer", 1), ("orch", 1)]
    assert len(server.requests) == 3  # the provider was asked again; the ledger bills the attempt once


@pytest.mark.django_db
def test_each_role_calls_its_configured_model(server, run, settings):
    settings.LLM_TRIAGE_MODEL = "gpt-4.1-mini"
    settings.LLM_VERIFIER_MODEL = "gpt-4.1"
    gw = gateway(run, "U9", 1)

    gw.complete(role="triage", messages=MESSAGES, max_tokens=10)
    gw.complete(role="verifier", messages=MESSAGES, max_tokens=10)

    assert [r["model"] for r in server.requests] == ["gpt-4.1-mini", "gpt-4.1"]
    assert [(r.role, r.model) for r in rows(run)] == [("triage", "gpt-4.1-mini"), ("verifier", "gpt-4.1")]
    with pytest.raises(UnknownRole, match="no model is configured for role 'poet'"):
        gw.complete(role="poet", messages=MESSAGES, max_tokens=10)
    assert len(server.requests) == 2


@pytest.mark.django_db
def test_a_model_missing_from_the_price_table_is_billed_zero_and_labelled(server, run):
    gateway(run, "U10", 1).complete(role="writer", model="gemma3-270m", messages=MESSAGES,
                                                max_tokens=10)

    (row,) = rows(run)
    assert row.cost_usd == 0 and row.price_version == f"{PRICE_VERSION}:unpriced" and row.prompt_tokens > 0


@pytest.mark.django_db
def test_a_failed_call_is_recorded_as_an_error_and_raised(server, run):
    server.script([{"status": 500}, {"status": 500}])

    with pytest.raises(ProviderError, match="status 500 after 2 attempts"):
        gateway(run, "U10", 1).complete(role="writer", messages=MESSAGES, max_tokens=10)

    (row,) = rows(run)
    assert (row.status, row.cost_usd, row.prompt_tokens) == ("error", 0, 0)
    assert "500" in row.error


# --- the per-run cost cap -----------------------------------------------------------------------------------
@pytest.mark.django_db
def test_a_call_over_the_cap_is_refused_before_anything_is_sent(server, run, specialist):
    specialist.cost_cap_usd = Decimal("0.0001")  # gpt-4o-mini: 200 output tokens alone forecast 0.00012
    specialist.save()

    with pytest.raises(CostCapExceeded) as caught:
        gateway(run, "U10", 1).complete(role="writer", messages=MESSAGES, max_tokens=200)

    message = str(caught.value)
    assert "run cost cap 0.000100 USD" in message and "gpt-4o-mini" in message and "LLM_FALLBACK_MODEL" in message
    assert isinstance(caught.value, ProviderError)  # callers with a deterministic fallback take it
    assert server.requests == []
    (row,) = rows(run)
    assert (row.status, row.cost_usd) == ("capped", 0) and "run cost cap" in row.error


@pytest.mark.django_db
def test_over_the_cap_the_cheaper_configured_model_is_used_when_it_fits(server, run, specialist, settings):
    settings.LLM_WRITER_MODEL = "gpt-4o"
    settings.LLM_FALLBACK_MODEL = "gpt-4o-mini"
    specialist.cost_cap_usd = Decimal("0.001")  # gpt-4o: 200 output tokens forecast 0.002; gpt-4o-mini 0.00013
    specialist.save()
    server.script([{"reply": "Так.", "usage": USAGE}])

    completion = gateway(run, "U10", 1).complete(role="writer", messages=MESSAGES, max_tokens=200)

    assert completion.model == "gpt-4o-mini" and server.requests[0]["model"] == "gpt-4o-mini"
    (row,) = rows(run)
    assert (row.model, row.status) == ("gpt-4o-mini", "downgraded")
    assert row.error.startswith("downgraded from gpt-4o: run cost cap 0.001000 USD")
    assert row.cost_usd == Decimal("0.0003972")


@pytest.mark.django_db
def test_what_the_run_already_spent_counts_against_its_cap(server, run, specialist):
    specialist.cost_cap_usd = Decimal("0.50")
    specialist.save()
    CostLedgerEntry.objects.create(run=run, stage="U9", kind="chat", role="triage", provider="openai",
                                   model="gpt-4o", cost_usd=Decimal("0.4999"), idempotency_key="earlier")

    with pytest.raises(CostCapExceeded, match=r"spent 0\.499900"):
        gateway(run, "U10", 1).complete(role="writer", messages=MESSAGES, max_tokens=200)
    assert server.requests == []


@pytest.mark.django_db
def test_the_cap_recorded_on_the_run_wins_over_a_later_specialist_change(server, run, specialist):
    run.limits = {"RUN_COST_CAP_USD": "0.0001"}
    run.save()
    specialist.cost_cap_usd = Decimal("5")
    specialist.save()

    with pytest.raises(CostCapExceeded):
        gateway(run, "U10", 1).complete(role="writer", messages=MESSAGES, max_tokens=200)


@pytest.mark.django_db
def test_the_offline_provider_is_free_so_no_cap_stops_it(run, specialist, settings):
    settings.LLM_PROVIDER = "offline"
    specialist.cost_cap_usd = Decimal("0")
    specialist.save()

    gateway(run, "U10", 1).complete(role="writer", messages=MESSAGES, max_tokens=200)

    (row,) = rows(run)
    assert (row.provider, row.status, row.cost_usd) == ("offline", "ok", 0) and row.prompt_tokens > 0


@pytest.mark.django_db
def test_calls_outside_a_run_are_each_recorded(server):
    server.default_behaviour = {"reply": "Так.", "usage": USAGE}
    gw = LlmGateway(None, "", 1)

    gw.complete(role="writer", messages=MESSAGES, max_tokens=10)
    gw.complete(role="writer", messages=MESSAGES, max_tokens=10)

    assert CostLedgerEntry.objects.filter(run__isnull=True).count() == 2


# --- embeddings ---------------------------------------------------------------------------------------------
@pytest.mark.django_db
def test_embedding_calls_are_recorded_local_ones_at_zero(run):
    texts = ["щорічна основна відпустка", "звільнення працівника"]
    gw = gateway(run, "U4", 1)

    gw.record_embedding(model="usem3", texts=texts, latency_ms=12)
    gw.record_embedding(model="text-embedding-3-small", provider="openai", input_tokens=1000)

    local, paid = rows(run)
    assert (local.kind, local.provider, local.role, local.cost_usd) == ("embedding", "local", "query", 0)
    assert local.prompt_tokens == sum(count_tokens(t, "usem3") for t in texts) > 0
    assert local.latency_ms == 12 and local.price_version == PRICE_VERSION
    assert (paid.cost_usd, paid.call_ordinal) == (Decimal("0.00002"), 2)


@pytest.mark.django_db
def test_record_embedding_call_is_idempotent_per_ordinal_and_skips_unbound_calls(run):
    for _ in range(2):  # a redelivered stage writes the same keys
        record_embedding_call(run_id=str(run.id), stage="U4", attempt=1, call_ordinal=1, model="usem3", texts=["а"])
    record_embedding_call(run_id=str(run.id), stage="U4", attempt=1, call_ordinal=2, model="usem3", texts=["б"])
    record_embedding_call(run_id=None, stage="", attempt=1, call_ordinal=1, model="usem3", texts=["в"])

    assert [r.idempotency_key for r in rows(run)] == [f"{run.id}:U4:1:query:1", f"{run.id}:U4:1:query:2"]
    assert CostLedgerEntry.objects.count() == 2


# --- redeliveries (issue 11): a call sent again is billed again ------------------------------------------------
ONE_CALL = Decimal("0.0003972")  # USAGE on gpt-4o-mini (the first test above)


@pytest.mark.django_db
def test_a_redelivered_stage_that_sends_its_call_again_is_billed_again_as_a_redelivery(server, run):
    server.default_behaviour = {"reply": "Так.", "usage": USAGE}
    gateway(run, "U10", 1).complete(role="writer", messages=MESSAGES, max_tokens=200)  # then the worker dies

    # the broker delivers the stage task again: the call is sent again, and a retry of that delivery finds its row
    for _ in range(2):
        gateway(run, "U10", 1, delivery=2).complete(role="writer", messages=MESSAGES, max_tokens=200)

    assert [(r.delivery, r.idempotency_key, r.cost_usd) for r in rows(run)] == [
        (1, f"{run.id}:U10:1:writer:1", ONE_CALL), (2, f"{run.id}:U10:1:writer:1:d2", ONE_CALL)]
    assert len(server.requests) == 3
    assert run_cost(run=run)["usd"] == f"{2 * ONE_CALL:.8f}"  # what the API reports as the run's spend


@pytest.mark.django_db
def test_a_redelivery_counts_against_the_runs_cap(server, run, specialist):
    # one call costs 0.0003972; the next one forecasts 0.000124 (its prompt + 200 output tokens): together past 0.0005
    specialist.cost_cap_usd = Decimal("0.0005")
    specialist.save()
    server.default_behaviour = {"reply": "Так.", "usage": USAGE}
    gateway(run, "U10", 1).complete(role="writer", messages=MESSAGES, max_tokens=200)

    with pytest.raises(CostCapExceeded, match=r"run cost cap 0\.000500 USD: spent 0\.000397"):
        gateway(run, "U10", 1, delivery=2).complete(role="writer", messages=MESSAGES, max_tokens=200)

    assert len(server.requests) == 1
    assert [(r.delivery, r.status) for r in rows(run)] == [(1, "ok"), (2, "capped")]


@pytest.mark.django_db
def test_a_redelivery_counts_against_the_orgs_daily_cap(server, run, settings):
    settings.ORG_DAILY_SPEND_CAP_USD = "0.0005"
    server.default_behaviour = {"reply": "Так.", "usage": USAGE}
    gateway(run, "U10", 1).complete(role="writer", messages=MESSAGES, max_tokens=200)

    with pytest.raises(OrgSpendCapExceeded, match=r"spent today 0\.000397"):
        gateway(run, "U10", 1, delivery=2).complete(role="writer", messages=MESSAGES, max_tokens=200)

    assert len(server.requests) == 1
    assert [(r.delivery, r.status) for r in rows(run)] == [(1, "ok"), (2, "capped")]


@pytest.mark.django_db
def test_a_redelivered_search_records_its_embedding_calls_again(run):
    for delivery in (1, 2, 2):
        record_embedding_call(run_id=str(run.id), stage="U4", attempt=1, call_ordinal=1, model="usem3", texts=["а"],
                              delivery=delivery)

    assert [(r.delivery, r.idempotency_key) for r in rows(run)] == [
        (1, f"{run.id}:U4:1:query:1"), (2, f"{run.id}:U4:1:query:1:d2")]


@pytest.mark.django_db
def test_a_runs_call_without_its_caps_is_refused_before_anything_is_sent(server, run):
    with pytest.raises(ValueError, match="needs its SpendCaps"):
        LlmGateway(str(run.id), "U10", 1).complete(role="writer", messages=MESSAGES, max_tokens=200)

    assert server.requests == [] and rows(run) == []
    with pytest.raises(ValueError, match="delivery counts from 1"):
        LlmGateway(str(run.id), "U10", 1, delivery=0)
