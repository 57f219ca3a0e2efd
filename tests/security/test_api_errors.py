"""Issue 12, item 6: bad input is a 4xx with a stable code and a sentence; internal exception text never reaches a
client; the schema names each body after its operation and describes the Bearer key."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from documents.services import DocumentInputError
from knowledge.apis import DoclistDisabled
from lexery.api_errors import exception_handler
from lexery.errors import (
    Conflict,
    InputError,
    LimitExceeded,
    NotFound,
    QuotaExceeded,
    ServiceError,
    Unavailable,
    UploadTooLarge,
)
from memory.services import MemoryInputError
from runs.models import Run, StageEvent
from runs.services import RunInputError, RunStateError
from tests.conftest import post_run
from tests.factories import SpecialistFactory, org_create

SECRET_TEXT = "connection to postgres://admin:hunter2@10.0.0.5/lexery failed at /srv/lexery/runs/models.py"


@pytest.mark.django_db
@pytest.mark.parametrize("query", ["to=9999-12-31", "to=0001-01-01", "from=0001-01-01&to=2026-01-01",
                                   "from=9999-12-31&to=9999-12-31"])
def test_a_date_at_the_edge_of_the_calendar_is_a_400_not_a_500(api, query):
    response = api.get(f"/api/v1/costs?{query}")

    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid_input" and "out of range" in body["detail"]


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/v1/documents", "/api/v1/memory"])
def test_a_nul_byte_in_user_ref_is_a_400_not_a_database_error(api, path):
    response = api.get(path, {"user_ref": "u\x001"})

    assert response.status_code == 400, response.content
    assert response.json()["code"] == "invalid_input" and "user_ref" in response.json()["detail"]


@pytest.mark.django_db
def test_another_orgs_specialist_and_an_unknown_one_get_the_same_answer(api, specialist):
    other = org_create("other")
    SpecialistFactory(org=other, slug="secret-team")

    theirs = post_run(api, question="Що таке трудовий договір?", specialist="secret-team")
    nobodys = post_run(api, question="Що таке трудовий договір?", specialist="no-such-team")

    assert theirs.status_code == nobodys.status_code == 400
    assert theirs.json()["code"] == nobodys.json()["code"] == "invalid_input"
    assert theirs.json()["detail"].replace("secret-team", "X") == nobodys.json()["detail"].replace("no-such-team", "X")
    assert Run.objects.count() == 0


# One row per typed service error: the status and the stable code the one handler answers with.
SERVICE_ERRORS = [
    (InputError, 400, "invalid_input"), (RunInputError, 400, "invalid_input"),
    (DocumentInputError, 400, "invalid_input"), (MemoryInputError, 400, "invalid_input"),
    (NotFound, 404, "not_found"),
    (Conflict, 409, "conflict"), (RunStateError, 409, "conflict"),
    (LimitExceeded, 413, "limit_exceeded"), (UploadTooLarge, 413, "upload_too_large"),
    (QuotaExceeded, 409, "quota_exceeded"),
    (Unavailable, 503, "unavailable"), (DoclistDisabled, 503, "doclist_disabled"),
]


@pytest.mark.parametrize("error, status, code", SERVICE_ERRORS, ids=[e.__name__ for e, _, _ in SERVICE_ERRORS])
def test_a_service_error_is_answered_with_its_status_and_code_and_its_sentence(error, status, code):
    response = exception_handler(error("a sentence for the client"), {})

    assert response is not None
    assert (response.status_code, response.data) == (status, {"code": code, "detail": "a sentence for the client"})


def test_every_service_error_has_a_row_in_the_table():
    def subclasses(kind: type[ServiceError]) -> set[type[ServiceError]]:
        return {kind} | {s for sub in kind.__subclasses__() for s in subclasses(sub)}

    assert subclasses(ServiceError) - {ServiceError} == {e for e, _, _ in SERVICE_ERRORS}


@pytest.mark.django_db
def test_every_error_carries_a_stable_code(api, specialist):
    assert APIClient().get("/api/v1/memory").json()["code"] == "not_authenticated"
    assert api.get("/api/v1/runs/00000000-0000-0000-0000-000000000000").json()["code"] == "not_found"
    assert api.post("/api/v1/memory", {"user_ref": "", "text": "x"}, format="json").json()["code"] == "invalid_input"


@pytest.mark.django_db
def test_an_unexpected_exception_is_a_500_that_says_nothing_of_it(api, specialist, monkeypatch):
    def broken(**_: Any) -> None:
        raise RuntimeError(SECRET_TEXT)

    monkeypatch.setattr("memory.apis.memory_item_list", broken)

    response = api.get("/api/v1/memory")

    assert response.status_code == 500
    assert response.json()["code"] == "server_error"
    assert "hunter2" not in response.content.decode() and "/srv/" not in response.content.decode()


@pytest.mark.django_db
def test_a_failed_stage_shows_the_client_a_code_and_the_operators_the_exception(api, specialist, monkeypatch,
                                                                                 django_capture_on_commit_callbacks):
    def broken(*_: Any) -> None:
        raise RuntimeError(SECRET_TEXT)

    monkeypatch.setitem(__import__("engine.runners", fromlist=["RUNNERS"]).RUNNERS, "U2", broken)
    with django_capture_on_commit_callbacks(execute=True):
        created = post_run(api, question="Що таке трудовий договір?", specialist="labour")

    run = api.get(f"/api/v1/runs/{created.json()['id']}").json()
    events = api.get(f"/api/v1/runs/{created.json()['id']}/events").content.decode()

    assert run["status"] == "failed" and run["error_code"] == "stage_failed"
    assert run["error"] == "U2 failed; the operators have the details."
    assert "hunter2" not in str(run) and "hunter2" not in events
    assert "hunter2" in Run.objects.get(pk=run["id"]).error  # the operators keep it (admin, logs)
    assert "hunter2" in StageEvent.objects.get(run_id=run["id"], stage="U2").detail["error"]


@pytest.mark.django_db
def test_exception_text_in_a_stage_events_detail_reaches_clients_only_as_a_count(api, specialist):
    run = Run.objects.create(org=specialist.org, specialist=specialist, question="Питання")
    StageEvent.objects.create(run=run, step=1, stage="U7", attempt=1, outcome="ok", started_at=timezone.now(),
                              detail={"probed": ["docs"], "channel_errors": [f"docs: RuntimeError: {SECRET_TEXT}"]})

    events = api.get(f"/api/v1/runs/{run.pk}/events")

    assert "hunter2" not in events.content.decode()
    assert events.json()["events"][0]["detail"] == {"probed": ["docs"], "internal_errors": 1}


def test_the_schema_names_bodies_by_operation_and_describes_the_bearer_key(client, db):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    components = schema["components"]["schemas"]

    assert "Input" not in components and "Output" not in components
    run_body = schema["paths"]["/api/v1/runs"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert run_body["$ref"].endswith("/RunCreateInput")
    assert set(components["RunCreateInput"]["properties"]) >= {"question", "specialist"}
    assert schema["components"]["securitySchemes"]["ApiKey"] == {
        "type": "http", "scheme": "bearer", "bearerFormat": "lx_…",
        "description": "An org's API key: `Authorization: Bearer <key>`."}
    assert schema["paths"]["/api/v1/runs"]["post"]["security"] == [{"ApiKey": []}]
