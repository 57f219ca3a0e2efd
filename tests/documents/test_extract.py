"""Text extraction from uploads (documents/extract.py): real files, made in the test."""

from __future__ import annotations

import pytest

from documents.extract import ExtractionError, document_kind, extract_text
from tests.documents.files import tiny_docx, tiny_pdf

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def test_a_pdf_gives_the_text_of_its_pages() -> None:
    text = extract_text(tiny_pdf(["Lease agreement No. 7", "The penalty is 5 percent per day."]), "pdf")
    assert "Lease agreement No. 7" in text and "penalty is 5 percent" in text


def test_a_pdf_without_a_text_layer_gives_no_text() -> None:
    assert extract_text(tiny_pdf([]), "pdf").strip() == ""


def test_a_docx_gives_its_paragraphs_and_table_rows() -> None:
    data = tiny_docx(["Договір оренди квартири.", "Орендар сплачує штраф 5 відсотків."],
                     table=[["Сторона", "Орендодавець"], ["Строк", "12 місяців"]])
    text = extract_text(data, "docx")
    assert "Договір оренди квартири." in text and "штраф 5 відсотків" in text
    assert "Строк | 12 місяців" in text


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1251"])
def test_plain_text_is_read_in_utf8_or_windows_1251(encoding: str) -> None:
    assert extract_text("Штраф — 5 відсотків.".encode(encoding), "txt") == "Штраф — 5 відсотків."


@pytest.mark.parametrize("data, kind, message", [
    (b"\x00\x01binary", "txt", "binary"),
    (b"not a pdf at all", "pdf", "not a PDF"),
    (b"%PDF-1.4\ngarbage", "pdf", "could not be read"),
    (b"plain words", "docx", "not a DOCX"),
])
def test_a_broken_file_is_refused_with_a_sentence(data: bytes, kind: str, message: str) -> None:
    with pytest.raises(ExtractionError, match=message):
        extract_text(data, kind)


@pytest.mark.parametrize("filename, content_type, kind", [
    ("Договір.PDF", "application/pdf", "pdf"), ("notes.md", "text/plain", "md"), ("a.txt", "", "txt"),
    ("contract.docx", DOCX, "docx"), ("contract.docx", "application/octet-stream", "docx"),
])
def test_the_kind_comes_from_the_extension_and_the_type_must_agree(filename: str, content_type: str,
                                                                   kind: str) -> None:
    assert document_kind(filename, content_type) == kind


@pytest.mark.parametrize("filename, content_type, message", [
    ("photo.jpg", "image/jpeg", "not a supported document"),
    ("contract.doc", "application/msword", "not a supported document"),
    ("contract.pdf", "image/png", "not a pdf file"),
])
def test_other_types_are_refused(filename: str, content_type: str, message: str) -> None:
    with pytest.raises(ExtractionError, match=message):
        document_kind(filename, content_type)
