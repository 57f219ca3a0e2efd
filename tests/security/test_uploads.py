"""Issue 12, item 2: an upload cannot take the web process down — its size is enforced while the body streams, a
DOCX/ZIP bomb is refused before it is inflated, a PDF's pages are capped."""

from __future__ import annotations

import io
import time
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

from documents.extract import ExtractionError, ExtractLimits, extract_text
from documents.models import UserDocument
from tests.documents.files import tiny_docx, tiny_pdf

DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def docx_bomb(inflated_mb: int = 80) -> bytes:
    """A real DOCX whose document.xml is padded with ``inflated_mb`` MB of whitespace: ~80 KB packed."""
    real = zipfile.ZipFile(io.BytesIO(tiny_docx(["Договір."])))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for item in real.infolist():
            data = real.read(item.filename)
            if item.filename == "word/document.xml":
                data = data.replace(b"<w:body>", b"<w:body>" + b" " * (inflated_mb * 1024 * 1024), 1)
            z.writestr(item.filename, data)
    return out.getvalue()


class Unreadable(io.RawIOBase):
    """A request body that must never be read."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]  # RawIOBase takes any buffer; this one only refuses
        raise AssertionError("the body was read")


@pytest.mark.django_db
def test_a_body_announcing_2_gb_is_refused_without_being_read(api, specialist):
    response = api.generic("POST", "/api/v1/documents", b"", content_type=MULTIPART_CONTENT,
                           CONTENT_LENGTH=str(2 * 1024 ** 3), **{"wsgi.input": Unreadable()})

    assert response.status_code == 413, response.content
    assert response.json()["code"] == "upload_too_large"
    assert "the limit is 10485760 bytes (DOCUMENT_MAX_BYTES)" in response.json()["detail"]


@pytest.mark.django_db
def test_a_file_that_passes_the_limit_while_streaming_is_cut_off(api, specialist, settings):
    settings.DOCUMENT_MAX_BYTES = 1000  # the body's announced length passes (overhead allowed), the file does not
    body = encode_multipart(BOUNDARY, {"user_ref": "u1",
                                       "file": SimpleUploadedFile("a.txt", b"x" * 5000, content_type="text/plain")})

    response = api.generic("POST", "/api/v1/documents", body, content_type=MULTIPART_CONTENT)

    assert response.status_code == 413, response.content
    assert response.json()["code"] == "upload_too_large" and UserDocument.objects.count() == 0


@pytest.mark.django_db
def test_a_docx_bomb_is_refused_quickly_with_a_sentence(api, specialist):
    bomb = docx_bomb()
    assert len(bomb) < 1024 * 1024

    started = time.monotonic()
    response = api.post("/api/v1/documents", {"file": SimpleUploadedFile("bomb.docx", bomb, content_type=DOCX_TYPE),
                                              "user_ref": "u1"}, format="multipart")

    assert time.monotonic() - started < 2.0
    assert response.status_code == 400, response.content
    assert "(DOCUMENT_MAX_UNCOMPRESSED_BYTES)" in response.json()["detail"]
    assert UserDocument.objects.count() == 0


def test_a_zip_that_inflates_past_the_ratio_is_refused():
    with pytest.raises(ExtractionError, match="DOCUMENT_MAX_ZIP_RATIO"):
        extract_text(docx_bomb(inflated_mb=8), "docx", ExtractLimits(max_zip_ratio=100))


def test_a_pdf_over_the_page_cap_is_refused_and_one_within_it_is_read():
    pdf = tiny_pdf(["Lease agreement"])

    with pytest.raises(ExtractionError, match=r"the PDF has 1 pages; the limit is 0 \(DOCUMENT_MAX_PDF_PAGES\)"):
        extract_text(pdf, "pdf", ExtractLimits(max_pdf_pages=0))
    assert "Lease agreement" in extract_text(pdf, "pdf", ExtractLimits(max_pdf_pages=1))


@pytest.mark.django_db
def test_the_web_request_extracts_nothing_and_answers_202_extracting(api, specialist, monkeypatch):
    def not_here(*_: object, **__: object) -> str:
        raise AssertionError("text extracted inside the request")

    monkeypatch.setattr("documents.processing.extract_text", not_here)

    # the on-commit work (the worker's) is not run: this is what the web process does alone
    response = api.post("/api/v1/documents", {"file": SimpleUploadedFile("a.txt", "Договір.".encode(), "text/plain"),
                                              "user_ref": "u1"}, format="multipart")

    assert response.status_code == 202 and response.json()["status"] == "extracting", response.content


@pytest.mark.django_db
def test_an_extraction_past_its_time_limit_fails_with_a_sentence(api, specialist, monkeypatch, settings):
    from celery.exceptions import SoftTimeLimitExceeded

    from documents.tasks import document_extract_task

    response = api.post("/api/v1/documents", {"file": SimpleUploadedFile("a.txt", "Договір.".encode(), "text/plain"),
                                              "user_ref": "u1"}, format="multipart")

    def slow(**_: object) -> None:
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr("documents.tasks.document_extract", slow)
    document_extract_task(response.json()["id"])

    body = api.get(f"/api/v1/documents/{response.json()['id']}").json()
    assert body["status"] == "failed"
    assert body["error"] == (f"reading the document took longer than {settings.DOCUMENT_EXTRACT_TIME_LIMIT_S} s "
                             "(DOCUMENT_EXTRACT_TIME_LIMIT_S)")
