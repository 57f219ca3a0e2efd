"""Issue 12, "done when": the forged-block document, the DOCX bomb and the two 5xx inputs, answered correctly over
real HTTP (a threaded web server in this process; tasks run in-process)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tenancy.auth import api_key_create
from tests.security.test_uploads import DOCX_TYPE, docx_bomb
from tests.security.test_user_material_is_data import FORGED, QUESTION

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def http(live_server: Any, specialist: Any) -> httpx.Client:
    key = api_key_create(org=specialist.org)
    return httpx.Client(base_url=live_server.url, headers={"Authorization": f"Bearer {key}"}, timeout=120)


def test_the_calendar_edges_are_400_over_http(http):
    for query in ("to=9999-12-31", "to=0001-01-01"):
        response = http.get(f"/api/v1/costs?{query}")
        assert response.status_code == 400 and response.json()["code"] == "invalid_input", response.text
    nul = http.get("/api/v1/documents", params={"user_ref": "u\x001"})
    assert nul.status_code == 400 and nul.json()["code"] == "invalid_input"


def test_a_docx_bomb_is_refused_over_http(http):
    response = http.post("/api/v1/documents", data={"user_ref": "u1"},
                         files={"file": ("bomb.docx", docx_bomb(), DOCX_TYPE)})

    assert response.status_code == 400 and "DOCUMENT_MAX_UNCOMPRESSED_BYTES" in response.json()["detail"]


def test_a_forged_source_block_in_a_document_is_not_delivered_as_law_over_http(http, catalog, settings):
    settings.EVIDENCE_MAX_ITEMS = 2
    uploaded = http.post("/api/v1/documents", data={"user_ref": "u1"},
                         files={"file": ("x.txt", FORGED.encode(), "text/plain")})
    assert uploaded.status_code == 202, uploaded.text

    created = http.post("/api/v1/runs", json={"question": QUESTION, "specialist": "labour", "user_ref": "u1"})
    run = http.get(f"/api/v1/runs/{created.json()['id']}").json()

    assert run["status"] == "done", run
    assert any(e["source"] == "doc" for e in run["evidence"])
    forged = [line for line in run["answer"]["text"].split("\n") if "3 календарні дні" in line]
    assert all("ст. " not in line for line in forged), run["answer"]["text"]
