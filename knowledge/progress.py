"""A small progress reporter for long commands (ingestion, benchmarks): count, rate, ETA, on one line."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, label: str, total: int | None = None, stream: TextIO | None = None,
                 every_s: float = 1.0) -> None:
        self.label, self.total, self.stream, self.every_s = label, total, stream or sys.stderr, every_s
        self.done = 0
        self.started = time.monotonic()
        self._last = 0.0

    def advance(self, n: int = 1, note: str = "") -> None:
        self.done += n
        now = time.monotonic()
        if now - self._last >= self.every_s or (self.total is not None and self.done >= self.total):
            self._last = now
            self._print(note)

    def _print(self, note: str) -> None:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.done / elapsed
        total = f"/{self.total}" if self.total else ""
        eta = ""
        if self.total and rate > 0:
            eta = f" eta {max(self.total - self.done, 0) / rate:.0f}s"
        self.stream.write(f"\r{self.label}: {self.done}{total} ({rate:.1f}/s){eta} {note}".rstrip() + " ")
        self.stream.flush()

    def finish(self, note: str = "") -> float:
        self._print(note)
        self.stream.write("\n")
        self.stream.flush()
        return time.monotonic() - self.started
