"""What a DOCX may cost to read (documents/extract.py). Only text is extracted, so only the text parts (the XML
python-docx parses into trees) count against DOCUMENT_MAX_UNCOMPRESSED_BYTES and DOCUMENT_MAX_ZIP_RATIO, and the
pictures are never unpacked; a body with more text than DOCUMENT_MAX_CHUNKS chunks hold is refused while its XML
streams by, before a tree is built. Before: a 1.4 MB DOCX of 45 MB of repetitive XML and one incompressible picture
passed both limits (the picture raised the packed size under the ratio) and took ~20 s and ~520 MB of the
extraction worker to refuse, while a ~90 KB DOCX holding one blank page scanned as BMP was refused at upload."""

from __future__ import annotations

import io
import random
import tracemalloc
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from documents.extract import ExtractionError, ExtractLimits, check_zip, extract_text
from documents.models import UserDocument
from tests.documents.files import flat_bmp, grown_docx, noise_png, tiny_docx

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
CLAUSE = "Орендар зобов'язаний сплачувати орендну плату щомісяця до десятого числа."
LETTERS = "абвгґдеєжзиіїйклмнопрстуфхцчшщьюя"


def _words(rnd: random.Random, n: int) -> str:
    """Text that packs like prose, not like a repeated clause (the ratio does not catch it)."""
    return " ".join("".join(rnd.choice(LETTERS) for _ in range(rnd.randint(2, 9))) for _ in range(n))


def test_a_blank_page_scanned_as_bmp_neither_counts_nor_is_unpacked() -> None:
    # given a DOCX of ~90 KB whose one picture is a 55 MB BMP (a flat colour packs ~1000 times)
    data = grown_docx(["Договір оренди квартири.", CLAUSE], pictures=[flat_bmp(4300)])
    picture = max(zipfile.ZipFile(io.BytesIO(data)).infolist(), key=lambda m: m.file_size)
    assert picture.filename.startswith("word/media/") and picture.file_size > ExtractLimits().max_uncompressed_bytes

    # when it is checked at upload and its text extracted, under the default limits
    tracemalloc.start()
    try:
        check_zip(data, ExtractLimits())
        text = extract_text(data, "docx", ExtractLimits())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    # then the text is there and the picture was never inflated (the old code refused it: 55 MB > the 50 MB limit)
    assert "Договір оренди квартири." in text and CLAUSE in text
    assert peak < picture.file_size // 5, peak


def test_repetitive_xml_behind_an_incompressible_picture_is_refused_by_the_ratio_of_its_text_parts() -> None:
    # given a DOCX whose body repeats one clause 15,000 times (~60× packed) beside a photo of random pixels that
    # brings the ratio of the whole archive under 20
    data = grown_docx([CLAUSE] * 15_000, pictures=[noise_png(400)])
    members = zipfile.ZipFile(io.BytesIO(data)).infolist()
    assert sum(m.file_size for m in members) / sum(m.compress_size for m in members) < 20

    # then the zip directory alone refuses it: the text parts unpack far more than 20 times
    with pytest.raises(ExtractionError, match=r"text parts unpack \d+ times .* limit is 20 \(DOCUMENT_MAX_ZIP_RATIO\)"):
        check_zip(data, ExtractLimits(max_zip_ratio=20))


def test_text_longer_than_the_chunks_allow_is_refused_while_the_body_streams() -> None:
    # given a body of prose-like text twice the bound, whose XML breaks off after it (as a hostile file may):
    # python-docx, which parses the whole part first, could only call it unreadable
    rnd = random.Random(7)
    data = grown_docx([_words(rnd, 15) for _ in range(2_000)])
    limits = ExtractLimits(max_chars=100_000)
    broken = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(broken, "w", zipfile.ZIP_DEFLATED) as target:
        for member in source.infolist():
            body = source.read(member.filename)
            target.writestr(member.filename, body[:-300] if member.filename == "word/document.xml" else body)

    # then the refusal is the one for too much text, found before the broken end was reached
    for docx in (data, broken.getvalue()):
        with pytest.raises(ExtractionError, match=r"the text is longer than 100000 characters, more than the "
                                                  r"DOCUMENT_MAX_CHUNKS chunks"):
            extract_text(docx, "docx", limits)


def test_text_within_the_bound_is_extracted_as_python_docx_reads_it() -> None:
    # pictures emptied, paragraphs and table rows as before (tests/documents/test_extract.py has the table)
    rnd = random.Random(3)
    paragraphs = [_words(rnd, 12) for _ in range(300)]
    data = grown_docx(paragraphs, pictures=[noise_png(64)])

    text = extract_text(data, "docx", ExtractLimits(max_chars=100_000))

    assert text.split("\n")[:300] == paragraphs
    assert extract_text(tiny_docx(["a"], table=[["Строк", "12 місяців"]]), "docx",
                        ExtractLimits(max_chars=100_000)).split("\n")[-1] == "Строк | 12 місяців"


@pytest.mark.django_db
def test_an_upload_with_more_text_than_document_max_chunks_fails_with_the_setting_named(
        api, specialist, settings, django_capture_on_commit_callbacks) -> None:
    settings.DOCUMENT_MAX_CHUNKS = 2  # 2 × CHUNK_MAX_CHARS (1200) characters at most
    data = grown_docx([_words(random.Random(5), 40) for _ in range(30)])

    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/v1/documents", {"file": SimpleUploadedFile("long.docx", data, content_type=DOCX),
                                                  "user_ref": "u1"}, format="multipart")

    assert response.status_code == 202, response.content
    document = UserDocument.objects.get(pk=response.json()["id"])
    assert document.status == UserDocument.Status.FAILED
    assert document.error == ("long.docx: the text is longer than 2400 characters, more than the DOCUMENT_MAX_CHUNKS "
                              "chunks a document may make")
