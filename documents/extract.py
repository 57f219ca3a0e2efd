"""Text out of an uploaded file: plain text and Markdown decoded, PDF through pypdf, DOCX through python-docx.
Pure (bytes in, text out); every refusal is an ``ExtractionError`` whose message is a sentence for the client."""

from __future__ import annotations

import io
import logging
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath

logger = logging.getLogger(__name__)

# Decided by the file name's extension; the declared content type is what browsers guess, so it only has to be
# one that can mean this kind (or the generic octet-stream).
KIND_CONTENT_TYPES: dict[str, frozenset[str]] = {
    "txt": frozenset({"text/plain"}),
    "md": frozenset({"text/markdown", "text/x-markdown", "text/plain"}),
    "pdf": frozenset({"application/pdf", "application/x-pdf"}),
    "docx": frozenset({"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                       "application/zip"}),
}
EXTENSIONS = {".txt": "txt", ".text": "txt", ".md": "md", ".markdown": "md", ".pdf": "pdf", ".docx": "docx"}
GENERIC_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream"})


class ExtractionError(ValueError):
    """The file cannot become text; the message says why in one sentence."""


@dataclass(frozen=True)
class ExtractLimits:
    """What one upload may cost to read (settings ``DOCUMENT_MAX_UNCOMPRESSED_BYTES``, ``DOCUMENT_MAX_ZIP_RATIO``,
    ``DOCUMENT_MAX_PDF_PAGES``). A 208 KB DOCX holding 83 MB of XML took 4.8 s and 589 MB to refuse (issue 12)."""

    max_uncompressed_bytes: int = 50 * 1024 * 1024
    max_zip_ratio: int = 100
    max_pdf_pages: int = 300


def check_zip(data: bytes, limits: ExtractLimits) -> None:
    """Refuse a ZIP (a DOCX is one) whose members would inflate past the limits, before anything is inflated. The
    sizes are the ones the archive declares; ``zipfile`` never inflates a member past its declared size (it fails
    the CRC instead), so a lying header cannot get round them."""
    try:
        members = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ExtractionError("the file is not a DOCX document") from exc
    inflated = sum(m.file_size for m in members)
    packed = max(sum(m.compress_size for m in members), 1)
    if inflated > limits.max_uncompressed_bytes:
        raise ExtractionError(f"the document unpacks to {inflated} bytes; the limit is "
                              f"{limits.max_uncompressed_bytes} (DOCUMENT_MAX_UNCOMPRESSED_BYTES)")
    if inflated / packed > limits.max_zip_ratio:
        raise ExtractionError(f"the document unpacks {inflated // packed} times its packed size; the limit is "
                              f"{limits.max_zip_ratio} (DOCUMENT_MAX_ZIP_RATIO)")


def document_kind(filename: str, content_type: str) -> str:
    kind = EXTENSIONS.get(PurePosixPath(filename.lower()).suffix)
    if kind is None:
        raise ExtractionError(f"{filename!r} is not a supported document; upload a .txt, .md, .pdf or .docx file")
    declared = (content_type or "").split(";")[0].strip().lower()
    if declared not in GENERIC_TYPES and declared not in KIND_CONTENT_TYPES[kind]:
        raise ExtractionError(f"{filename!r} is sent as {declared!r}, which is not a {kind} file")
    return kind


def _plain(data: bytes) -> str:
    if b"\x00" in data:
        raise ExtractionError("the file is binary, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Ukrainian text from older Windows tools is often cp1251; any other byte soup is refused below.
        try:
            return data.decode("cp1251")
        except UnicodeDecodeError as exc:
            raise ExtractionError("the text is neither UTF-8 nor Windows-1251") from exc


def _pdf(data: bytes, limits: ExtractLimits) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    if not data.startswith(b"%PDF"):
        raise ExtractionError("the file is not a PDF")
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractionError("the PDF is password-protected")
        pages = len(reader.pages)
        if pages > limits.max_pdf_pages:
            raise ExtractionError(f"the PDF has {pages} pages; the limit is {limits.max_pdf_pages} "
                                  "(DOCUMENT_MAX_PDF_PAGES)")
        return "\n".join(page.extract_text() or "" for page in reader.pages)
    except ExtractionError:
        raise
    except (PyPdfError, ValueError, KeyError, OSError) as exc:  # pypdf raises plain errors on broken files too
        logger.info("PDF unreadable", extra={"error": f"{type(exc).__name__}: {exc}"[:200]})
        raise ExtractionError("the PDF could not be read") from exc


def _docx(data: bytes, limits: ExtractLimits) -> str:
    import docx

    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise ExtractionError("the file is not a DOCX document")
    check_zip(data, limits)
    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx has no error base of its own: KeyError, ValueError, lxml errors
        logger.info("DOCX unreadable", extra={"error": f"{type(exc).__name__}: {exc}"[:200]})
        raise ExtractionError("the DOCX document could not be read") from exc
    lines = [p.text for p in document.paragraphs]
    for table in document.tables:  # contracts keep terms in tables too
        for row in table.rows:
            lines.append(" | ".join(dict.fromkeys(cell.text.strip() for cell in row.cells if cell.text.strip())))
    return "\n".join(lines)


# C0 control characters but tab and line breaks: a form feed is a page break, the rest is noise. A PDF's text may
# hold NUL (a string "(a\000b)" draws one): it reached the run's evidence, and PostgreSQL refuses \u0000 in a JSON
# column, so every run that cited the document failed (fuzzing, issue 12).
_CONTROLS = {c: None for c in range(32) if chr(c) not in "\t\n\r\f"} | {ord("\f"): "\n", 0x7F: None}


def extract_text(data: bytes, kind: str, limits: ExtractLimits | None = None) -> str:
    """The document's text, paragraphs on their own lines (chunking cuts there first), without control characters."""
    limits = limits or ExtractLimits()
    if kind in ("txt", "md"):
        text = _plain(data)
    elif kind == "pdf":
        text = _pdf(data, limits)
    elif kind == "docx":
        text = _docx(data, limits)
    else:
        raise ExtractionError(f"unsupported document kind {kind!r}")
    return text.translate(_CONTROLS)
