"""User documents through the HTTP API: upload → stored, chunked, indexed (real embedder; the document's own Qdrant
Edge shard, or with ``LLDBI_SEARCH=qdrant`` the collection a Qdrant server keeps, here in qdrant-client's local mode)
→ a mixed question finds the document as evidence with provenance ``doc``; another org or user never sees it."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.files.storage import storages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from rest_framework.test import APIClient

from documents import shards
from documents.models import UserDocument
from documents.processing import chunk_key
from documents.retrieval import indexed_chunks
from knowledge.embeddings import default_embedder
from runs.models import RunContext
from tenancy.auth import api_key_create
from tests.conftest import post_run
from tests.documents.files import tiny_docx, tiny_pdf
from tests.factories import SpecialistFactory, org_create

CONTRACT = ["Договір оренди квартири № 7.",
            "Орендар сплачує орендну плату щомісяця до п'ятого числа.",
            "За прострочення оплати орендар сплачує штраф у розмірі 5 відсотків від суми боргу за кожен день.",
            "Договір діє дванадцять місяців."]
QUESTION = "Що в моєму договорі сказано про штраф за прострочення оплати?"
DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def a_zip_that_is_not_docx() -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("readme.txt", "hello")
    return buffer.getvalue()


def upload(api: APIClient, capture: Any, name: str, data: bytes, content_type: str, user_ref: str = "u1") -> Any:
    with capture(execute=True):  # the index task runs on commit (the retrieval worker's job)
        return api.post("/api/v1/documents", {"file": SimpleUploadedFile(name, data, content_type=content_type),
                                              "user_ref": user_ref}, format="multipart")


def ask(api: APIClient, capture: Any, question: str, **extra: Any) -> dict[str, Any]:
    with capture(execute=True):
        created = post_run(api, question=question, specialist="labour", **extra)
    assert created.status_code == 202, created.content
    return api.get(f"/api/v1/runs/{created.json()['id']}").json()


@pytest.fixture(autouse=True)
def no_stored_documents() -> None:
    """Rows roll back after each test, stored files do not: start every test with none."""
    import shutil
    from pathlib import Path

    shutil.rmtree(Path(storages["snippets"].path("docs")), ignore_errors=True)


def stored_files() -> list[str]:
    storage = storages["snippets"]
    if not storage.exists("docs"):
        return []
    found = []
    for org_dir in storage.listdir("docs")[0]:
        for doc_dir in storage.listdir(f"docs/{org_dir}")[0]:
            found += [f"docs/{org_dir}/{doc_dir}/{f}" for f in storage.listdir(f"docs/{org_dir}/{doc_dir}")[1]]
    return found


@pytest.mark.django_db
def test_an_uploaded_docx_is_stored_chunked_and_indexed(api, specialist, django_capture_on_commit_callbacks):
    response = upload(api, django_capture_on_commit_callbacks, "Договір оренди.docx", tiny_docx(CONTRACT), DOCX_TYPE)

    assert response.status_code == 202, response.content
    # the test runs on-commit work after the response; a worker (or the embedded mode) indexes it just the same
    body = api.get(f"/api/v1/documents/{response.json()['id']}").json()
    assert (body["status"], body["kind"], body["user_ref"], body["n_chunks"]) == ("ready", "docx", "u1", 1)
    document = UserDocument.objects.get(pk=body["id"])
    store = storages["snippets"]
    assert store.exists(document.storage_key)
    with store.open(chunk_key(org_id=document.org_id, document_id=document.pk, ordinal=0)) as fh:
        assert "штраф у розмірі 5 відсотків" in fh.read().decode()
    assert api.get(f"/api/v1/documents/{body['id']}").json()["filename"] == "Договір оренди.docx"
    assert [d["id"] for d in api.get("/api/v1/documents?user_ref=u1").json()] == [body["id"]]
    assert api.get("/api/v1/documents?user_ref=u2").json() == []


@pytest.mark.django_db
@pytest.mark.parametrize("name, data, content_type, message", [
    ("empty.txt", b"", "text/plain", "the file is empty"),
    ("photo.jpg", b"\xff\xd8\xff\xe0 jpeg", "image/jpeg", "not a supported document"),
    ("broken.docx", b"PK\x03\x04 not really", DOCX_TYPE, "not a DOCX document"),
])
def test_a_bad_upload_gets_400_with_a_sentence_and_leaves_nothing(api, specialist, name, data, content_type,
                                                                   message, django_capture_on_commit_callbacks):
    response = upload(api, django_capture_on_commit_callbacks, name, data, content_type)

    assert response.status_code == 400, response.content
    assert message in response.json()["detail"]
    assert UserDocument.objects.count() == 0 and stored_files() == []


@pytest.mark.django_db
@pytest.mark.parametrize("name, data, content_type, message", [
    ("scan.pdf", tiny_pdf([]), "application/pdf", "no text could be extracted"),
    ("other.docx", a_zip_that_is_not_docx(), DOCX_TYPE, "could not be read"),
    ("blank.md", b"   \n\n  ", "text/markdown", "no text could be extracted"),
])
def test_a_file_without_usable_text_is_accepted_then_fails_on_the_worker_with_a_sentence(
        api, specialist, name, data, content_type, message, django_capture_on_commit_callbacks):
    response = upload(api, django_capture_on_commit_callbacks, name, data, content_type)

    assert response.status_code == 202 and response.json()["status"] == "extracting", response.content
    body = api.get(f"/api/v1/documents/{response.json()['id']}").json()
    assert body["status"] == "failed" and message in body["error"], body
    assert stored_files() == []  # the original is dropped: it will never be used


@pytest.mark.django_db
def test_an_upload_over_the_size_limit_or_without_a_user_is_refused(api, specialist, settings,
                                                                   django_capture_on_commit_callbacks):
    settings.DOCUMENT_MAX_BYTES = 10
    too_big = upload(api, django_capture_on_commit_callbacks, "a.txt", b"x" * 11, "text/plain")
    settings.DOCUMENT_MAX_BYTES = 10_000
    no_user = upload(api, django_capture_on_commit_callbacks, "a.txt", b"some text", "text/plain", user_ref=" ")

    assert too_big.status_code == 413 and "the limit is 10 bytes (DOCUMENT_MAX_BYTES)" in too_big.json()["detail"]
    assert no_user.status_code == 400 and "user_ref must not be empty" in no_user.json()["detail"]
    assert UserDocument.objects.count() == 0 and stored_files() == []


@pytest.mark.django_db
def test_a_pdf_upload_is_indexed(api, specialist, django_capture_on_commit_callbacks):
    pdf = tiny_pdf(["Lease agreement No. 7.", "The tenant pays a penalty of 5 percent per day of delay."])
    response = upload(api, django_capture_on_commit_callbacks, "lease.pdf", pdf, "application/pdf")

    assert response.status_code == 202, response.content
    body = api.get(f"/api/v1/documents/{response.json()['id']}").json()
    assert body["status"] == "ready" and body["n_chars"] > 40, body


# "qdrant": the QDRANT_URL path's code (documents/index.py: one collection, filtered by org and user)
ENGINES = pytest.mark.parametrize("engine", ["edge", "qdrant"])


@pytest.mark.django_db
@ENGINES
def test_a_mixed_question_answers_from_the_users_document_and_only_theirs(
        api, specialist, catalog, django_capture_on_commit_callbacks, settings, engine):
    settings.LLDBI_SEARCH = engine
    # given u1 of acme uploaded a contract
    capture = django_capture_on_commit_callbacks
    doc = upload(api, capture, "договір.txt", "\n".join(CONTRACT).encode(), "text/plain").json()
    # when u1 asks about "my contract"
    run = ask(api, capture, QUESTION, user_ref="u1")
    # then the document is evidence with provenance doc, rendered in the prompt, quoted in the answer
    assert run["status"] == "done", run
    docs = [e for e in run["evidence"] if e["source"] == "doc"]
    assert docs and docs[0]["label"] == "doc:договір.txt#1" and docs[0]["article_ref"] is None
    prompt = RunContext.objects.get(run_id=run["id"]).document["assembled_prompt"]
    assert any(s["source"] == "doc" and s["r2_key"].startswith(f"docs/{specialist.org_id}/{doc['id']}/")
               for s in prompt["snippets"])
    assert prompt["budget"]["doc_chars"] > 0
    assert all(not r["r2_key"].startswith("docs/") for r in prompt["lawSourceRefs"])
    assert "штраф у розмірі 5 відсотків" in run["answer"]["text"]
    assert all(c["act_nreg"] for c in run["answer"]["citations"])  # citations are law only
    # and neither another user of the org nor another org sees it, even under the same user_ref
    other_user = ask(api, capture, QUESTION, user_ref="u2")
    stranger_org = org_create("stranger")
    SpecialistFactory(org=stranger_org, slug="labour")
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key_create(org=stranger_org)}")
    other_org = ask(stranger, capture, QUESTION, user_ref="u1")
    for seen in (other_user, other_org):
        assert seen["status"] == "done", seen
        assert not [e for e in seen["evidence"] if e["source"] == "doc"]
        assert "штраф у розмірі 5 відсотків" not in seen["answer"]["text"]
    assert stranger.get(f"/api/v1/documents/{doc['id']}").status_code == 404
    assert stranger.delete(f"/api/v1/documents/{doc['id']}").status_code == 404
    assert stranger.get("/api/v1/documents?user_ref=u1").json() == []


@pytest.mark.django_db
def test_a_law_question_does_not_look_at_documents(api, specialist, catalog, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    upload(api, capture, "договір.txt", "\n".join(CONTRACT).encode(), "text/plain")

    run = ask(api, capture, "Скільки календарних днів триває щорічна основна відпустка?", user_ref="u1")

    assert run["status"] == "done" and {e["source"] for e in run["evidence"]} == {"lldbi"}
    u7 = next(e for e in api.get(f"/api/v1/runs/{run['id']}/events").json()["events"] if e["stage"] == "U7")
    assert u7["detail"]["probed"] == []


@pytest.mark.django_db
@ENGINES
def test_deleting_a_document_removes_its_files_its_points_and_its_evidence(
        api, specialist, catalog, django_capture_on_commit_callbacks, settings, engine):
    settings.LLDBI_SEARCH = engine
    capture = django_capture_on_commit_callbacks
    doc = upload(api, capture, "договір.txt", "\n".join(CONTRACT).encode(), "text/plain").json()
    assert indexed_chunks(doc["id"]) == 1

    with capture(execute=True):
        response = api.delete(f"/api/v1/documents/{doc['id']}")

    assert response.status_code == 204
    assert api.get(f"/api/v1/documents/{doc['id']}").status_code == 404
    assert stored_files() == []
    assert indexed_chunks(doc["id"]) == 0
    run = ask(api, capture, QUESTION, user_ref="u1")
    assert not [e for e in run["evidence"] if e["source"] == "doc"]


@pytest.mark.django_db
def test_after_an_engine_upgrade_a_documents_shard_is_skipped_until_build_search_shards_rebuilds_it(
        api, specialist, catalog, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    doc = upload(api, capture, "договір.txt", "\n".join(CONTRACT).encode(), "text/plain").json()
    manifest = shards.shard_path(doc["id"]) / shards.MANIFEST
    # as if another qdrant-edge version wrote it: the files may not be this version's format
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "edge_version": "0.0.1"}))
    shards.forget(doc["id"])

    before = ask(api, capture, QUESTION, user_ref="u1")
    call_command("build_search_shards", stdout=StringIO())
    after = ask(api, capture, QUESTION, user_ref="u1")

    assert before["status"] == "done" and not [e for e in before["evidence"] if e["source"] == "doc"]
    assert shards.is_current(doc["id"], embed_model=default_embedder().name)
    assert [e["label"] for e in after["evidence"] if e["source"] == "doc"][:1] == ["doc:договір.txt#1"]


@pytest.mark.django_db
def test_a_search_asks_the_users_newest_documents_up_to_the_cap(
        api, specialist, catalog, django_capture_on_commit_callbacks, settings, caplog):
    capture = django_capture_on_commit_callbacks
    upload(api, capture, "старий.txt", "\n".join(CONTRACT).encode(), "text/plain")
    upload(api, capture, "новий.txt", "\n".join(CONTRACT).encode(), "text/plain")
    settings.DOCS_SEARCH_MAX_DOCUMENTS = 1

    run = ask(api, capture, QUESTION, user_ref="u1")

    assert {e["label"].split("#")[0] for e in run["evidence"] if e["source"] == "doc"} == {"doc:новий.txt"}
    assert "the oldest are not searched" in caplog.text
