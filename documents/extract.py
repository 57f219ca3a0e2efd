"""Text out of an uploaded file: plain text and Markdown decoded, PDF through pypdf, DOCX through python-docx.
Pure (bytes in, text out); every refusal is an ``ExtractionError`` whose message is a sentence for the client."""

from __future__ import annotations

import io
import logging
import time
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pypdf loads on first use (the web process never reads a PDF)
    from pypdf import PdfReader

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
    # Checked between a PDF's pages: the worker's time limit stops a prefork child, but the embedded mode extracts
    # in the web process itself, where 300 pages drawing one 1.3 MB stream each kept a request busy for minutes.
    max_seconds: float | None = None
    max_chars: int | None = None  # text longer than this is refused anyway (DOCUMENT_MAX_CHUNKS): stop reading


# The parts of a DOCX that are parsed into XML trees (python-docx parses every XML part it reaches: the body,
# styles, numbering, relationships — about ten times their size in memory). Everything else (images, embedded
# objects, fonts) is never unpacked: only text is extracted (``_text_package``).
_TEXT_PART_SUFFIXES = (".xml", ".rels")


def _is_text_part(name: str) -> bool:
    return name.lower().endswith(_TEXT_PART_SUFFIXES)


def check_zip(data: bytes, limits: ExtractLimits) -> None:
    """Refuse a ZIP (a DOCX is one) whose text parts would inflate past the limits, before anything is inflated.
    The sizes are the ones the archive declares; ``zipfile`` never inflates a member past its declared size (it
    fails the CRC instead), so a lying header cannot get round them. Only the text parts count, in size and in
    ratio: the media are never unpacked, and counted in they let a DOCX of a few incompressible images carry 45 MB
    of repetitive XML under the ratio (it took ~20 s and ~520 MB to refuse)."""
    try:
        members = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ExtractionError("the file is not a DOCX document") from exc
    text = [m for m in members if _is_text_part(m.filename)]
    inflated = sum(m.file_size for m in text)
    packed = max(sum(m.compress_size for m in text), 1)
    if inflated > limits.max_uncompressed_bytes:
        raise ExtractionError(f"the document's text parts unpack to {inflated} bytes; the limit is "
                              f"{limits.max_uncompressed_bytes} (DOCUMENT_MAX_UNCOMPRESSED_BYTES)")
    if inflated / packed > limits.max_zip_ratio:
        raise ExtractionError(f"the document's text parts unpack {inflated // packed} times their packed size; the "
                              f"limit is {limits.max_zip_ratio} (DOCUMENT_MAX_ZIP_RATIO)")


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
        return _pages_text(reader, limits)
    except ExtractionError:
        raise
    # pypdf parses hostile input and fails on broken files with whatever error its code meets: PyPdfError,
    # ValueError, KeyError, but also AttributeError (an object that refers to itself), TypeError, RecursionError.
    # Each is this file's fault, not ours: a sentence for the client, the error in the log.
    except Exception as exc:
        logger.info("PDF unreadable", extra={"error": f"{type(exc).__name__}: {exc}"[:200],
                                             "pypdf_error": isinstance(exc, PyPdfError)})
        raise ExtractionError("the PDF could not be read") from exc


def _pages_text(reader: PdfReader, limits: ExtractLimits) -> str:
    deadline = None if limits.max_seconds is None else time.monotonic() + limits.max_seconds
    texts: list[str] = []
    chars = 0
    for page in reader.pages:
        texts.append(page.extract_text() or "")
        chars += len(texts[-1])
        if limits.max_chars is not None and chars > limits.max_chars:
            raise _too_long(limits)
        if deadline is not None and time.monotonic() > deadline:
            raise ExtractionError(f"reading the PDF took longer than {limits.max_seconds:.0f} s "
                                  "(DOCUMENT_EXTRACT_TIME_LIMIT_S)")
    return "\n".join(texts)


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
# Run content python-docx turns into one character each (docx/oxml/text/run.py); a paragraph ends with a newline.
_ONE_CHAR = frozenset(f"{_W}{name}" for name in ("tab", "br", "cr", "ptab", "noBreakHyphen"))
_MAIN_PART = "word/document.xml"


def _too_long(limits: ExtractLimits) -> ExtractionError:
    return ExtractionError(f"the text is longer than {limits.max_chars} characters, more than the "
                           "DOCUMENT_MAX_CHUNKS chunks a document may make")


def _check_text_length(archive: zipfile.ZipFile, limits: ExtractLimits) -> None:
    """Count the body's characters while its XML streams by, and refuse as soon as they pass ``max_chars``: before
    python-docx builds a tree of a document that will be refused anyway. Memory stays that of one paragraph; the
    time that of ``max_chars`` characters' worth of XML. No DTD is loaded, no entity resolved, nothing fetched."""
    from lxml import etree

    if limits.max_chars is None or _MAIN_PART not in archive.namelist():
        return  # no bound to keep; a body elsewhere is python-docx's to find (or to fail on)
    chars = 0
    with archive.open(_MAIN_PART) as body:
        for _, element in etree.iterparse(body, events=("end",), resolve_entities=False, no_network=True,
                                          load_dtd=False, huge_tree=False):
            if element.tag == f"{_W}t":
                chars += len(element.text or "")
            elif element.tag in _ONE_CHAR:
                chars += 1
            elif element.tag == f"{_W}p":
                chars += 1
                element.clear(keep_tail=True)  # a paragraph counted is dropped with what came before it
                while element.getprevious() is not None:
                    del element.getparent()[0]
            if chars > limits.max_chars:
                raise _too_long(limits)


def _text_package(archive: zipfile.ZipFile) -> io.BytesIO:
    """The DOCX as python-docx reads it: its text parts, every other part (images, embedded files) empty — python-docx
    reads every part it reaches, and a DOCX is unpacked for its text alone."""
    package = io.BytesIO()
    with zipfile.ZipFile(package, "w", zipfile.ZIP_STORED) as out:
        for member in archive.infolist():
            out.writestr(member.filename, archive.read(member) if _is_text_part(member.filename) else b"")
    package.seek(0)
    return package


def _docx(data: bytes, limits: ExtractLimits) -> str:
    import docx

    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise ExtractionError("the file is not a DOCX document")
    check_zip(data, limits)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        _check_text_length(archive, limits)
        document = docx.Document(_text_package(archive))
        # python-docx reads the parts lazily: a document.xml without a body fails here, with an AttributeError
        lines = [p.text for p in document.paragraphs]
        for table in document.tables:  # contracts keep terms in tables too
            for row in table.rows:
                lines.append(" | ".join(dict.fromkeys(c.text.strip() for c in row.cells if c.text.strip())))
    except ExtractionError:
        raise
    except Exception as exc:  # python-docx and lxml have no error base of ours: KeyError, ValueError, lxml errors
        logger.info("DOCX unreadable", extra={"error": f"{type(exc).__name__}: {exc}"[:200]})
        raise ExtractionError("the DOCX document could not be read") from exc
    text = "\n".join(lines)
    if limits.max_chars is not None and len(text) > limits.max_chars:
        raise _too_long(limits)
    return text


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
