"""What fuzzing the API's doors found (issue 12 follow-up): bodies the server will not read, and input that passed
validation but broke later. Each is a 4xx with a stable code and a sentence of ours, and nothing is stored."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from kombu.exceptions import OperationalError as BrokerError

from documents import shards
from documents.models import UserDocument
from documents.processing import chunk_key
from documents.services import document_create
from documents.tasks import document_extract_task
from knowledge.snippets import SnippetStore
from lexery.errors import InputError
from memory.models import MemoryItem
from memory.services import memory_item_create
from runs.models import Run
from runs.services import run_create
from tests.documents.files import docx_with_body, self_referring_pdf, slow_pdf, tiny_pdf
from tests.documents.test_documents_api import ask, stored_files, upload
from tests.support.broker import BrokerProxy, celery_broker
from tests.support.loopback import closed_port

JSON = "application/json"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
FORM = "application/x-www-form-urlencoded"


def multipart(*parts: tuple[str, str | None, bytes]) -> bytes:
    """A multipart/form-data body with boundary ``B``: (field name, file name or None, content) per part."""
    body = b""
    for name, filename, content in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        body += f"--B\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + content + b"\r\n"
    return body + b"--B--\r\n"


MULTIPART = "multipart/form-data; boundary=B"

# (method, path, body, content type) → the status and stable code. Before: each was a 500, or a 400 whose detail was
# the parser's exception text.
REFUSED_BODIES = {
    "a 3 MB JSON body": ("post", "/api/v1/runs", json.dumps({"question": "x" * 3_000_000, "specialist": "labour"}),
                         JSON, 413, "request_too_large"),
    "a 3 MB form body": ("post", "/api/v1/runs", "specialist=labour&question=" + "x" * 3_000_000, FORM,
                         413, "request_too_large"),
    "2,000 form fields": ("post", "/api/v1/runs", "&".join(f"f{i}=1" for i in range(2000)), FORM,
                          400, "too_many_fields"),
    "1,100 multipart fields": ("post", "/api/v1/documents",
                               multipart(*((f"f{i}", None, b"1") for i in range(1100))), MULTIPART,
                               400, "too_many_fields"),
    "120 files": ("post", "/api/v1/documents", multipart(*(("file", f"a{i}.txt", b"1") for i in range(120))),
                  MULTIPART, 400, "too_many_fields"),
    "a 3 MB multipart field": ("post", "/api/v1/documents", multipart(("user_ref", None, b"x" * 3_000_000)),
                               MULTIPART, 413, "request_too_large"),
    "JSON nested 100,000 deep": ("post", "/api/v1/runs", '{"question":' + "[" * 100_000 + "]" * 100_000 + "}",
                                 JSON, 400, "malformed_request"),
    "objects nested 5,000 deep": ("post", "/api/v1/memory", '{"user_ref":"u","text":' + '{"a":' * 5000 + "1"
                                  + "}" * 5000 + "}", JSON, 400, "malformed_request"),
    "JSON that is not UTF-8": ("post", "/api/v1/runs", b'{"question": "\xff\xfe"}', JSON, 400, "malformed_request"),
    "JSON with NaN": ("post", "/api/v1/runs", '{"question": NaN, "specialist": "labour"}', JSON,
                      400, "malformed_request"),
    "JSON cut short": ("post", "/api/v1/runs", '{"question": "x", ', JSON, 400, "malformed_request"),
    "multipart without a boundary": ("post", "/api/v1/documents", b"--xx\r\nfoo", "multipart/form-data",
                                     400, "malformed_request"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("method, path, body, content_type, status, code", REFUSED_BODIES.values(),
                         ids=list(REFUSED_BODIES))
def test_a_body_the_server_will_not_read_is_a_4xx_with_our_sentence_and_stores_nothing(
        api, specialist, method, path, body, content_type, status, code):
    response = api.generic(method.upper(), path, body, content_type=content_type)

    assert (response.status_code, response.json()["code"]) == (status, code), response.content
    detail = response.json()["detail"]
    # our sentence, never the parser's exception text
    assert not any(leak in detail for leak in ("codec", "Expecting", "Multipart form parse error", "JSON parse error",
                                               "Traceback", "Error"))
    assert Run.objects.count() == MemoryItem.objects.count() == UserDocument.objects.count() == 0


@pytest.mark.django_db
def test_a_query_string_of_2000_parameters_is_a_400_not_a_500(api, specialist):
    response = api.get("/api/v1/memory?" + "&".join(f"f{i}=1" for i in range(2000)))

    assert response.status_code == 400 and response.json()["code"] == "too_many_fields", response.content


@pytest.mark.django_db
def test_a_json_syntax_error_says_where(api, specialist):
    response = api.generic("POST", "/api/v1/runs", '{"question": "x",\n "specialist" "labour"}', content_type=JSON)

    assert response.json() == {"code": "malformed_request",
                               "detail": "the body is not valid JSON (line 2, column 15)"}


@pytest.mark.django_db
def test_a_pdf_whose_text_holds_nul_bytes_is_read_without_them_and_runs_on_it_finish(
        api, specialist, catalog, django_capture_on_commit_callbacks):
    # A PDF string "(a\000b)" draws a NUL; PostgreSQL refuses \u0000 in the run's JSON, so the run citing it failed.
    pdf = tiny_pdf(["Dogovir orendy kvartyry", "Shtraf za prostrochennia oplaty \\000 5 vidsotkiv \\000 za den"])
    uploaded = upload(api, django_capture_on_commit_callbacks, "d.pdf", pdf, "application/pdf")
    document = UserDocument.objects.get(pk=uploaded.json()["id"])
    chunks = [SnippetStore().get(chunk_key(org_id=document.org_id, document_id=document.pk, ordinal=i))
              for i in range(document.n_chunks)]

    run = ask(api, django_capture_on_commit_callbacks,
              "Що в моєму договорі сказано про штраф? Shtraf za prostrochennia oplaty", user_ref="u1")

    assert document.status == UserDocument.Status.READY and chunks and not any("\x00" in c for c in chunks)
    assert run["status"] == "done", run["error"]
    assert "doc" in {e["source"] for e in run["evidence"]}


UNSTORABLE = ["a\x00b", "\ud800", "x\udcff"]


@pytest.mark.django_db
@pytest.mark.parametrize("text", UNSTORABLE, ids=["nul", "high-surrogate", "low-surrogate"])
def test_the_services_refuse_text_a_database_cannot_store(specialist, text):
    # DRF's fields refuse these before a service sees them; the commands call the services directly.
    org = specialist.org
    refusals = [
        lambda: run_create(org=org, specialist=specialist, question=f"ст. 36 КЗпП {text}"),
        lambda: run_create(org=org, specialist=specialist, question="ст. 36 КЗпП", user_ref=text),
        lambda: run_create(org=org, specialist=specialist, question="ст. 36 КЗпП", conversation_id=text),
        lambda: memory_item_create(org=org, user_ref="u1", text=text),
        lambda: document_create(org=org, user_ref=text, filename="a.txt", content_type="text/plain", data=b"x"),
    ]
    for refuse in refusals:
        with pytest.raises(InputError, match="NUL character or invalid Unicode"):
            refuse()

    assert Run.objects.count() == MemoryItem.objects.count() == UserDocument.objects.count() == 0


@pytest.mark.django_db(transaction=True)  # the tasks are queued on commit: the request's own commit
def test_with_the_broker_down_an_upload_is_a_503_that_stores_nothing_and_a_delete_still_removes_all(
        api, specialist, settings):
    files_before = set(stored_files())
    document = document_create(org=specialist.org, user_ref="u1", filename="a.txt", content_type="text/plain",
                               data=b"hello")  # queued eagerly, as the test settings run tasks
    shards.build(str(document.pk), [], embed_model="test", dim=4)  # the points a retrieval worker would have
    settings.CELERY_TASK_ALWAYS_EAGER = False
    with BrokerProxy() as proxy:
        pass  # closed: nothing listens on its port, as with the broker's host down
    with celery_broker(proxy.url):
        upload = api.post("/api/v1/documents", {"file": SimpleUploadedFile("b.txt", b"hello", "text/plain"),
                                                "user_ref": "u1"}, format="multipart")
        deleted = api.delete(f"/api/v1/documents/{document.pk}")

    assert upload.status_code == 503 and upload.json()["code"] == "unavailable", upload.content
    assert "upload it again" in upload.json()["detail"]
    assert deleted.status_code == 204, deleted.content
    assert not UserDocument.objects.exists()
    assert set(stored_files()) == files_before  # neither the refused upload's file nor the deleted one's
    assert not shards.exists(str(document.pk))


def extracted(api, capture, name: str, data: bytes) -> UserDocument:
    response = upload(api, capture, name, data, "application/pdf")
    assert response.status_code == 202, response.content
    return UserDocument.objects.get(pk=response.json()["id"])


@pytest.mark.django_db
def test_a_pdf_that_refers_to_itself_fails_with_a_sentence(api, specialist, django_capture_on_commit_callbacks):
    # pypdf raised an AttributeError, outside the errors _pdf caught: the extraction crashed, the row stayed
    # "extracting" for ever.
    document = extracted(api, django_capture_on_commit_callbacks, "loop.pdf", self_referring_pdf())

    assert (document.status, document.error) == (UserDocument.Status.FAILED, "loop.pdf: the PDF could not be read")


@pytest.mark.django_db
def test_a_slow_pdf_is_stopped_at_the_time_limit_in_the_process_that_reads_it(
        api, specialist, settings, django_capture_on_commit_callbacks):
    # Embedded mode extracts in the web process, where no worker's time limit applies: 300 pages drawing one
    # 1.3 MB stream each (a 1.4 MB file) kept a request busy for minutes.
    settings.DOCUMENT_EXTRACT_TIME_LIMIT_S = 1
    started = time.monotonic()

    document = extracted(api, django_capture_on_commit_callbacks, "slow.pdf", slow_pdf(pages=12,
                                                                                       shows_per_page=50_000))

    assert document.status == UserDocument.Status.FAILED
    assert document.error == "slow.pdf: reading the PDF took longer than 1 s (DOCUMENT_EXTRACT_TIME_LIMIT_S)"
    assert time.monotonic() - started < 5  # ~0.5 s a page: it stopped after the page that passed the limit


@pytest.mark.django_db
def test_an_extraction_that_fails_on_our_side_ends_the_document_failed_not_extracting(
        api, specialist, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as queued:  # stored, its extraction not yet run
        document = document_create(org=specialist.org, user_ref="u1", filename="a.txt", content_type="text/plain",
                                   data=b"hello")
    SnippetStore().storage.delete(document.storage_key)  # the file store lost the original (fault injection)

    with pytest.raises(FileNotFoundError):
        for callback in queued:
            callback()

    document.refresh_from_db()
    assert (document.status, document.error) == (UserDocument.Status.FAILED,
                                                  "reading the document failed on our side; upload it again")


W = b'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
HOSTILE_DOCX_BODIES = {
    "no body": b"<w:document " + W + b"/>",  # python-docx raised AttributeError: the row stayed "extracting"
    "another root": b"<x/>",
    "paragraphs nested 100,000 deep": b"<w:document " + W + b"><w:body>" + b"<w:p>" * 100_000 + b"</w:p>" * 100_000
                                      + b"</w:body></w:document>",
    "a billion laughs": b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa">'
                        + b"".join(b'<!ENTITY %s "%s">' % (bytes([c]), b"&%s;" % bytes([c - 1]) * 10)
                                   for c in range(ord("b"), ord("i")))
                        + b"]><w:document " + W + b"><w:body><w:p><w:r><w:t>&h;</w:t></w:r></w:p></w:body>"
                          b"</w:document>",
}


@pytest.mark.django_db
@pytest.mark.parametrize("body", HOSTILE_DOCX_BODIES.values(), ids=list(HOSTILE_DOCX_BODIES))
def test_a_docx_with_a_hostile_body_fails_with_a_sentence(api, specialist, django_capture_on_commit_callbacks, body):
    response = upload(api, django_capture_on_commit_callbacks, "d.docx", docx_with_body(body), DOCX)
    document = UserDocument.objects.get(pk=response.json()["id"])

    assert (document.status, document.error) == (UserDocument.Status.FAILED,
                                                  "d.docx: the DOCX document could not be read")


@pytest.mark.django_db
def test_a_docx_naming_an_external_entity_does_not_read_it(api, specialist, django_capture_on_commit_callbacks):
    body = (b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/hostname">]><w:document ' + W
            + b"><w:body><w:p><w:r><w:t>before &x; after</w:t></w:r></w:p></w:body></w:document>")
    response = upload(api, django_capture_on_commit_callbacks, "d.docx", docx_with_body(body), DOCX)
    document = UserDocument.objects.get(pk=response.json()["id"])
    chunks = [SnippetStore().get(chunk_key(org_id=document.org_id, document_id=document.pk, ordinal=i))
              for i in range(document.n_chunks)]

    assert open("/etc/hostname").read().strip() not in "".join(chunks)


@pytest.mark.django_db
@pytest.mark.parametrize("method, path", [("get", "/api/v1/nope"), ("post", "/api/v1/runs/"),
                                          ("delete", "/api/v2/memory/1"), ("put", "/api/"), ("get", "/api/v1/%ff")])
def test_a_path_under_api_that_names_no_endpoint_is_a_json_404(api, client, method, path):
    for caller in (api, client):  # with a key and without one
        response = getattr(caller, method)(path)

        assert response.status_code == 404 and response["Content-Type"] == "application/json", response.content
        assert response.json()["code"] == "not_found" and "/api/schema/" in response.json()["detail"]


@pytest.mark.django_db
def test_with_the_rate_limits_cache_down_the_api_still_answers(api, specialist, settings):
    # Before: every API request was a 500 while the throttle's Redis refused connections.
    settings.CACHES = {**settings.CACHES, "throttle": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": f"redis://127.0.0.1:{closed_port()}/0"}}

    assert api.get("/api/v1/memory").status_code == 200


@contextmanager
def database_unreachable() -> Iterator[None]:
    """This process's connection pointed where no database answers (fault injection), then back."""
    if connection.vendor == "sqlite":
        pytest.skip("Django keeps an in-memory test database's connection open: it cannot be taken away")
    params = connection.settings_dict
    saved = dict(params)
    connection.close()
    params["HOST"], params["PORT"] = "127.0.0.1", str(closed_port())
    try:
        yield
    finally:
        connection.close()
        params.clear()
        params.update(saved)


@pytest.mark.django_db(transaction=True)
def test_with_the_database_down_the_api_answers_503_with_a_sentence(api, specialist):
    with database_unreachable():
        response = api.get("/api/v1/memory")

    assert response.status_code == 503, response.content
    assert response.json() == {"code": "unavailable",
                               "detail": "a service this request needs is unavailable; try again shortly"}


@pytest.mark.django_db(transaction=True)  # the index task is queued on the extraction's commit
def test_with_the_broker_down_after_extraction_the_document_ends_failed_not_indexing(specialist, settings):
    store = SnippetStore()
    document = UserDocument.objects.create(org=specialist.org, user_ref="u1", filename="a.txt", kind="txt",
                                           content_type="text/plain", size=5, status=UserDocument.Status.EXTRACTING,
                                           storage_key="pending")
    key = store.storage.save(f"docs/{specialist.org.pk}/{document.pk}/original.txt", ContentFile(b"hello"))
    UserDocument.objects.filter(pk=document.pk).update(storage_key=key)
    settings.CELERY_TASK_ALWAYS_EAGER = False
    with BrokerProxy() as proxy:
        pass  # closed
    with celery_broker(proxy.url), pytest.raises(BrokerError):
        document_extract_task(str(document.pk))  # the worker's task, run here

    document.refresh_from_db()
    assert (document.status, document.error) == (
        UserDocument.Status.FAILED,
        "the document could not be queued for indexing (the task broker is unavailable); upload it again")
