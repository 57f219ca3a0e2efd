"""The run API as a client meets it: create, poll, read the answer and the events, and the failure modes."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from rest_framework.test import APIClient

from llm.models import CostLedgerEntry
from runs.models import Run, StageEvent
from tests.conftest import post_run
from tests.factories import OrgFactory, SpecialistFactory, org_create

LEAVE_QUESTION = "Скільки календарних днів триває щорічна основна відпустка?"
LEAVE_REFS = {"КЗпП ст. 75", "Закон «Про відпустки» ст. 6"}


def ask(api: APIClient, capture: Any, question: str, specialist: str = "labour") -> dict[str, Any]:
    with capture(execute=True):
        created = post_run(api, question=question, specialist=specialist)
    assert created.status_code == 202, created.content
    return api.get(f"/api/v1/runs/{created.json()['id']}").json()


@pytest.mark.django_db
def test_a_question_walks_all_stages_and_comes_back_cited(api, specialist, catalog,
                                                          django_capture_on_commit_callbacks):
    run = ask(api, django_capture_on_commit_callbacks, LEAVE_QUESTION)

    assert run["status"] == "done", run
    refs = {c["article_ref"] for c in run["answer"]["citations"]}
    assert refs & LEAVE_REFS, refs
    assert any(ref in run["answer"]["text"] for ref in LEAVE_REFS)
    assert run["support_level"] in {"strong", "partial"}
    assert run["cost"]["prompt_tokens"] > 0 and Decimal(run["cost"]["usd"]) == 0  # offline: real counts, no cost
    events = api.get(f"/api/v1/runs/{run['id']}/events").json()["events"]
    stages = [e["stage"] for e in events]
    assert stages == ["U1", "U2", "U3", "U4", "U5", "U7", "U8", "U9", "U10", "U11", "U12"]
    assert all(e["outcome"] == "ok" for e in events)
    # a partial gate leaves ORCH a choice (U7 or U6): the canary may ask the cheap model there, nowhere else
    assert all(e["decided_by"] == "rule" for e in events if e["stage"] != "U5")
    assert events[4]["decided_by"] == ("rule" if run["support_level"] == "strong" else "cheap")
    assert events[-1]["next_action"] == "DONE"


@pytest.mark.django_db
def test_posting_a_run_answers_202_with_the_run_object(api, specialist, catalog):
    # on_commit callbacks are not executed here: the run stays queued, as a client polling a worker sees it
    response = post_run(api, question=LEAVE_QUESTION, specialist="labour")

    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued" and body["answer"] is None and body["specialist"] == "labour"


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body, message",
    [
        ({"question": "   ", "specialist": "labour"}, "question must not be empty"),
        ({"question": "х" * 5000, "specialist": "labour"}, "the limit is 4000"),
        ({"question": "Що таке відпустка?", "specialist": "nobody"}, "unknown specialist 'nobody'"),
        # DRF's own sentences in English too, though the console's language is Ukrainian (ops.middleware)
        ({"specialist": "labour"}, "question: This field is required."),
        ({"question": "Що таке відпустка?"}, "specialist: This field is required."),
        # another org's specialist is answered exactly like an unknown one: nothing about other orgs leaks
        ({"question": "Що таке відпустка?", "specialist": "other-org-specialist"},
         "unknown specialist 'other-org-specialist'"),
    ],
)
def test_bad_input_gets_400_with_a_sentence_and_stores_nothing(api, specialist, body, message):
    SpecialistFactory(slug="other-org-specialist", org=OrgFactory(slug="other"))

    response = post_run(api, **body)

    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert Run.objects.count() == 0 and StageEvent.objects.count() == 0


@pytest.mark.django_db
def test_a_run_of_another_org_is_not_found(api, specialist, catalog, django_capture_on_commit_callbacks):
    run = ask(api, django_capture_on_commit_callbacks, LEAVE_QUESTION)
    stranger = APIClient()
    from tenancy.auth import api_key_create

    stranger.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key_create(org=org_create('stranger'))}")

    assert stranger.get(f"/api/v1/runs/{run['id']}").status_code == 404
    assert stranger.get(f"/api/v1/runs/{run['id']}/events").status_code == 404
    assert api.get("/api/v1/runs/not-a-uuid").status_code == 404


@pytest.mark.django_db
def test_requests_without_a_valid_key_are_refused(specialist):
    client = APIClient()
    assert client.post("/api/v1/runs", {"question": "x", "specialist": "labour"}).status_code == 401
    client.credentials(HTTP_AUTHORIZATION="Bearer lx_wrong")
    response = client.get("/api/v1/runs/00000000-0000-0000-0000-000000000000")
    assert response.status_code == 401 and "unknown, expired or revoked" in response.json()["detail"]


@pytest.mark.django_db
def test_the_openapi_schema_describes_the_run_endpoints(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    text = response.content.decode()
    assert "/api/v1/runs/{run_id}/events" in text and "openapi" in text


@pytest.mark.django_db
def test_every_writer_call_is_in_the_ledger_once_even_when_redelivered(api, specialist, catalog,
                                                                        django_capture_on_commit_callbacks):
    run = ask(api, django_capture_on_commit_callbacks, LEAVE_QUESTION)
    rows = CostLedgerEntry.objects.filter(run_id=run["id"], stage="U10")  # U5's canary call has a row of its own
    assert rows.count() == 1
    row = rows.get()
    assert (row.stage, row.attempt, row.call_ordinal, row.provider) == ("U10", 1, 1, "offline")
    assert row.prompt_tokens > 100 and row.completion_tokens > 10 and row.cost_usd == 0

    from engine.shell import execute_stage

    execute_stage(run["id"], "U10", 1)  # a redelivered task for a finished attempt

    assert CostLedgerEntry.objects.filter(run_id=run["id"], stage="U10").count() == 1
    assert StageEvent.objects.filter(run_id=run["id"], stage="U10").count() == 1


@pytest.mark.django_db
def test_a_runaway_run_is_ended_by_the_step_cap(api, specialist, catalog, settings,
                                                django_capture_on_commit_callbacks):
    settings.RUN_MAX_STEPS = 4

    run = ask(api, django_capture_on_commit_callbacks, LEAVE_QUESTION)

    assert run["status"] == "failed"
    assert "RUN_MAX_STEPS=4" in run["error"]
    assert StageEvent.objects.filter(run_id=run["id"]).count() == 4
