"""The JSONL files ingest reads, plain or gzipped, streamed line by line: a 51k-provision file is never held whole."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class IngestError(Exception):
    """Bad input to an ingest command: the message is a sentence for the operator."""


def open_text(path: Path) -> Iterator[str]:
    """The file's lines as text. Every way it cannot be read is an ``IngestError`` naming it: a folder, a file that is
    not UTF-8, a cut or fake gzip, an I/O error — before, the first two were a traceback of the command."""
    if not path.exists():
        raise IngestError(f"file not found: {path}")
    if not path.is_file():
        raise IngestError(f"{path}: not a file")
    read = 0
    try:
        with (gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz"
              else open(path, encoding="utf-8")) as fh:
            for line in fh:
                read += 1
                yield line
    except UnicodeDecodeError as exc:  # decoded in blocks: the line is where the block starts, or after it
        raise IngestError(f"{path}: not UTF-8 text (at line {read + 1} or after it)") from exc
    # A cut download or a file that only ends in .gz: a sentence naming the file, not a zlib traceback.
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise IngestError(f"{path}: not a complete gzip file ({exc})") from exc
    except OSError as exc:
        raise IngestError(f"{path}: cannot be read ({exc.strerror or exc})") from exc


def find_jsonl(folder: Path, name: str) -> Path | None:
    """``name`` in ``folder``, plain or gzipped (``name.gz``, as the shipped corpus is); None when neither is."""
    for candidate in (folder / name, folder / f"{name}.gz"):
        if candidate.exists():
            return candidate
    return None


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The file's non-blank lines with their 1-based line numbers (for the operator's error messages)."""
    for lineno, line in enumerate(open_text(path), start=1):
        if line.strip():
            yield lineno, line


def count_lines(path: Path) -> int:
    """The progress bar's total: a cheap pass (51k gzipped lines read in about a second)."""
    return sum(1 for _ in numbered_lines(path))


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Each non-blank line parsed; a line that is not JSON stops the ingest with its place in the file."""
    for lineno, line in numbered_lines(path):
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as exc:
            raise IngestError(f"{path}:{lineno}: not JSON ({exc.msg})") from exc
