"""Tiny real documents made in the test: a PDF written by hand (text in a standard Type1 font, so ASCII only) and
a DOCX written by python-docx."""

from __future__ import annotations

import io


def tiny_pdf(lines: list[str]) -> bytes:
    """A one-page PDF 1.4 whose page shows ``lines``; no lines makes a page with no text (a "scan")."""
    shown = " ".join(f"({line}) Tj 0 -16 Td" for line in lines)
    content = f"BT /F1 12 Tf 72 720 Td {shown} ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def tiny_docx(paragraphs: list[str], table: list[list[str]] | None = None) -> bytes:
    import docx

    document = docx.Document()
    for p in paragraphs:
        document.add_paragraph(p)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, cell in enumerate(row):
                grid.cell(r, c).text = cell
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _pdf_of(objects: list[bytes]) -> bytes:
    """A PDF 1.4 of these objects (numbered from 1, the first the catalog) with a correct cross-reference table."""
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def slow_pdf(pages: int, shows_per_page: int) -> bytes:
    """``pages`` pages that all draw one content stream of ``shows_per_page`` text operations: a small file whose
    text takes pypdf about a second per 100,000 operations per page to extract."""
    content = b"BT /F1 12 Tf 72 720 Td " + b"(a) Tj " * shows_per_page + b"ET"
    kids = b" ".join(b"3 0 R" for _ in range(pages))
    return _pdf_of([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ])


def self_referring_pdf() -> bytes:
    """A catalog whose pages are an object that is only a reference to itself: pypdf fails with an AttributeError."""
    return _pdf_of([b"<< /Type /Catalog /Pages 3 0 R >>", b"<< >>", b"3 0 R"])


def docx_with_body(document_xml: bytes) -> bytes:
    """A real DOCX whose ``word/document.xml`` is replaced by ``document_xml``."""
    import zipfile

    source = zipfile.ZipFile(io.BytesIO(tiny_docx(["x"])))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for member in source.infolist():
            is_body = member.filename == "word/document.xml"
            target.writestr(member, document_xml if is_body else source.read(member.filename))
    return out.getvalue()


def noise_png(side: int, seed: int = 0) -> bytes:
    """A ``side``×``side`` PNG of random pixels, stored uncompressed: a photo's worth of incompressible bytes."""
    import random
    import struct
    import zlib

    rnd = random.Random(seed)
    raw = b"".join(b"\x00" + rnd.randbytes(side * 3) for _ in range(side))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 0)) + chunk(b"IEND", b""))


def flat_bmp(side: int) -> bytes:
    """A ``side``×``side`` 24-bit BMP of one colour (a blank scan saved as BMP): 3·side² bytes that pack ~1000×."""
    import struct

    row = side * 3 + (-side * 3) % 4
    pixels = b"\xff" * (row * side)
    header = struct.pack("<2sIHHI", b"BM", 54 + len(pixels), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, side, side, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    return header + info + pixels


def grown_docx(paragraphs: list[str], pictures: list[bytes] | None = None) -> bytes:
    """A real DOCX (python-docx's package; ``pictures`` added by python-docx, each referenced from the body) whose
    body holds ``paragraphs``, written straight into document.xml: python-docx adds a paragraph in time that grows
    with the document, and a hundred thousand would take minutes."""
    import zipfile
    from xml.sax.saxutils import escape

    import docx
    from docx.shared import Inches

    document = docx.Document()
    for picture in pictures or []:
        document.add_picture(io.BytesIO(picture), width=Inches(2))
    buffer = io.BytesIO()
    document.save(buffer)
    source = zipfile.ZipFile(buffer)
    body = source.read("word/document.xml").decode()
    at = body.index("<w:body>") + len("<w:body>")
    grown = "".join(f'<w:p><w:r><w:t xml:space="preserve">{escape(p)}</w:t></w:r></w:p>' for p in paragraphs)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for member in source.infolist():
            data = source.read(member.filename)
            target.writestr(member.filename, (body[:at] + grown + body[at:]).encode()
                            if member.filename == "word/document.xml" else data)
    return out.getvalue()
