"""Whole runs through the OpenAI path: the real ``openai`` SDK over HTTP to a loopback OpenAI-protocol server,
through the API, the shell, U10's gateway, U11 and U12, down to the ledger rows and what the client reads."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from engine.shell import execute_stage
from legaltext.citations import find_citations
from llm.models import CostLedgerEntry
from llm.pricing import PRICE_VERSION, PRICES
from runs.models import Run, RunContext
from tenancy.models import Specialist
from tests.conftest import post_run
from tests.support.openai_server import FakeOpenAIServer, openai_gateway

# An explicit act and article: ORCH's canary decides every branch by rule, so the writer is the only model call.
QUESTION = "Яка тривалість щорічної основної відпустки за статтею 75 КЗпП?"
GOOD = "Щорічна основна відпустка триває не менш як 24 календарних дні (КЗпП ст. 75)."
# Fabricated in the free form a model writes: the disciplinary article is nowhere in the leave evidence.
FABRICATED = ("Щорічна основна відпустка триває не менш як 24 календарних дні (КЗпП ст. 75); за її порушення "
              "роботодавця карають згідно зі статтею 147 Кодексу законів про працю України.")
USAGE = {"prompt_tokens": 3000, "completion_tokens": 40, "prompt_tokens_details": {"cached_tokens": 1024}}
MINI = PRICES["gpt-4o-mini"]
COST = (MINI.input * (3000 - 1024) + MINI.cached_input * 1024 + MINI.output * 40) / Decimal(1_000_000)


@pytest.fixture
def server(settings: Any) -> Iterator[FakeOpenAIServer]:
    with openai_gateway(settings, max_retries=2) as fake:
        yield fake


def ask(api: APIClient, capture: Any) -> dict[str, Any]:
    with capture(execute=True):
        created = post_run(api, question=QUESTION, specialist="labour")
    assert created.status_code == 202, created.content
    return dict(api.get(f"/api/v1/runs/{created.json()['id']}").json())


def ledger(run: dict[str, Any]) -> list[CostLedgerEntry]:
    return list(CostLedgerEntry.objects.filter(run_id=run["id"]).order_by("id"))


def document(run: dict[str, Any]) -> dict[str, Any]:
    return dict(RunContext.objects.get(run_id=run["id"]).document)


@pytest.mark.django_db
def test_a_run_through_openai_bills_each_call_once_with_the_servers_usage(api, specialist, catalog, server,
                                                                          django_capture_on_commit_callbacks):
    server.default_behaviour = {"reply": GOOD, "usage": USAGE}

    run = ask(api, django_capture_on_commit_callbacks)

    assert run["status"] == "done", run
    assert [c["article_ref"] for c in run["answer"]["citations"]] == ["КЗпП ст. 75"]
    assert run["answer"]["text"] == GOOD and run["support_level"] in {"strong", "partial"}
    rows = ledger(run)
    assert len(rows) == len(server.requests) == 1
    (row,) = rows
    assert (row.stage, row.attempt, row.call_ordinal, row.role) == ("U10", 1, 1, "writer")
    assert (row.provider, row.model, row.status, row.price_version) == ("openai", "gpt-4o-mini", "ok", PRICE_VERSION)
    assert (row.prompt_tokens, row.completion_tokens, row.cached_tokens) == (3000, 40, 1024)
    assert row.cost_usd == COST == Decimal("0.0003972")
    assert Decimal(run["cost"]["usd"]) == COST
    assert {k: run["cost"][k] for k in ("prompt_tokens", "completion_tokens", "cached_tokens")} == {
        "prompt_tokens": 3000, "completion_tokens": 40, "cached_tokens": 1024}
    # what went over the wire: the writer's model, its output bound, and the canonical-citation instruction
    sent = server.requests[0]
    assert (sent["model"], sent["max_tokens"]) == ("gpt-4o-mini", 900)
    assert "КЗпП ст. 75" in sent["messages"][0]["content"] and "українською" in sent["messages"][0]["content"]

    execute_stage(run["id"], "U10", 1)  # the stage task delivered again after it finished

    assert len(ledger(run)) == 1 and len(server.requests) == 1


@pytest.mark.django_db
def test_a_draft_citing_outside_the_evidence_is_rewritten_once_and_the_second_draft_is_verified(
        api, specialist, catalog, server, django_capture_on_commit_callbacks):
    server.script([{"reply": FABRICATED, "usage": USAGE}, {"reply": GOOD, "usage": USAGE}])

    run = ask(api, django_capture_on_commit_callbacks)

    assert run["status"] == "done", run
    assert "147" not in run["answer"]["text"] and run["answer"]["text"] == GOOD
    events = api.get(f"/api/v1/runs/{run['id']}/events").json()["events"]
    assert [e["stage"] for e in events][-5:] == ["U10", "U11", "U10", "U11", "U12"]
    assert events[-4]["next_action"] == "RUN_U10" and "write retry" in events[-4]["reason"]
    assert [(r.stage, r.attempt, r.status) for r in ledger(run)] == [("U10", 1, "ok"), ("U10", 2, "ok")]
    assert len(server.requests) == 2
    assert Decimal(run["cost"]["usd"]) == 2 * COST


@pytest.mark.django_db
def test_a_writer_that_keeps_citing_outside_the_evidence_never_reaches_the_client(
        api, specialist, catalog, server, django_capture_on_commit_callbacks):
    server.default_behaviour = {"reply": FABRICATED, "usage": USAGE}

    run = ask(api, django_capture_on_commit_callbacks)

    assert run["status"] == "done", run
    verify_result = document(run)["verify_result"]
    assert {c["article_ref"]: c["status"] for c in verify_result["citations"]} == {
        "КЗпП ст. 75": "supported", "КЗпП ст. 147": "not_in_evidence"}
    text = run["answer"]["text"]
    assert "147" not in text and "Кодексу законів про працю" not in text and "вилучено" in text
    assert {c.article_ref for c in find_citations(text, {"КЗпП": "322-08"})} == {"КЗпП ст. 75"}
    assert [c["article_ref"] for c in run["answer"]["citations"]] == ["КЗпП ст. 75"]
    assert run["support_level"] == "partial"
    assert document(run)["answer"]["removed_citations"] == ["КЗпП ст. 147"]
    assert len(ledger(run)) == len(server.requests) == 2  # U11_DIRECT_WRITE_RETRY_MAX=1: one rewrite, then U12


@pytest.mark.django_db
def test_a_cap_too_small_for_the_writer_model_downgrades_to_the_fallback(
        api, specialist: Specialist, catalog, server, settings, django_capture_on_commit_callbacks):
    settings.LLM_WRITER_MODEL = "gpt-4o"
    settings.LLM_FALLBACK_MODEL = "gpt-4o-mini"
    # gpt-4o: 900 output tokens alone forecast 0.009 USD; gpt-4o-mini stays under 0.0025 for any prompt < 13K tokens
    specialist.cost_cap_usd = Decimal("0.005")
    specialist.save()
    server.default_behaviour = {"reply": GOOD, "usage": USAGE}

    run = ask(api, django_capture_on_commit_callbacks)

    assert run["status"] == "done", run
    assert run["limits"]["RUN_COST_CAP_USD"] == "0.0050"
    assert [r["model"] for r in server.requests] == ["gpt-4o-mini"]
    (row,) = ledger(run)
    assert (row.model, row.status, row.cost_usd) == ("gpt-4o-mini", "downgraded", COST)
    assert row.error.startswith("downgraded from gpt-4o: run cost cap 0.005000 USD")
    assert document(run)["draft"]["model"] == "gpt-4o-mini"


@pytest.mark.django_db
def test_a_cap_no_configured_model_fits_stops_the_run_with_the_reason_on_it(
        api, specialist: Specialist, catalog, server, django_capture_on_commit_callbacks):
    specialist.cost_cap_usd = Decimal("0.0003")  # gpt-4o-mini: 900 output tokens alone forecast 0.00054 USD
    specialist.save()

    run = ask(api, django_capture_on_commit_callbacks)

    assert run["status"] == "failed"
    # the client gets a stable code and a sentence; the operators keep the whole reason on the run
    assert run["error_code"] == "cost_cap_exceeded" and run["error"].startswith("U10: the run's cost cap")
    error = Run.objects.get(pk=run["id"]).error
    assert error.startswith("U10 failed: CostCapExceeded: run cost cap 0.000300 USD: spent 0.000000 + "
                            "forecast "), error
    assert "gpt-4o-mini" in error and "LLM_FALLBACK_MODEL" in error
    assert server.requests == []  # nothing was spent
    (row,) = ledger(run)
    assert (row.status, row.cost_usd) == ("capped", 0)
    assert run["answer"] is None and Decimal(run["cost"]["usd"]) == 0


@pytest.mark.django_db
def test_rate_limits_and_slow_answers_are_retried_then_the_run_completes(
        api, specialist, catalog, server, settings, django_capture_on_commit_callbacks):
    settings.OPENAI_TIMEOUT_S = 0.5
    server.script([{"status": 429, "headers": {"retry-after": "0"}}, {"delay_s": 2.0},
                   {"reply": GOOD, "usage": USAGE}])

    run = ask(api, django_capture_on_commit_callbacks)

    assert run["status"] == "done", run
    assert len(server.requests) == 3  # 429, timeout, answer: three attempts of one call
    (row,) = ledger(run)
    assert (row.status, row.prompt_tokens, row.cost_usd) == ("ok", 3000, COST)


@pytest.mark.django_db
def test_server_errors_past_the_retry_bound_fail_the_run_with_the_reason(
        api, specialist, catalog, server, settings, django_capture_on_commit_callbacks):
    settings.OPENAI_MAX_RETRIES = 1
    server.script([{"status": 500, "headers": {"retry-after": "0"}}, {"status": 503, "headers": {"retry-after": "0"}},
                   {"reply": "never requested"}])

    run = ask(api, django_capture_on_commit_callbacks)

    assert run["status"] == "failed"
    assert (run["error_code"], run["error"]) == ("model_unavailable",
                                                 "U10: the language model did not answer; try again later.")
    assert Run.objects.get(pk=run["id"]).error == (
        "U10 failed: ProviderError: OpenAI model 'gpt-4o-mini' failed with status 503 after 2 attempts.")
    assert len(server.requests) == 2 and server.pending == 1
    (row,) = ledger(run)
    assert (row.status, row.cost_usd) == ("error", 0) and "503" in row.error
