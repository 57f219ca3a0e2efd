"""Chunk texts live in object storage under deterministic keys; the database and RunContext keep only keys."""

from __future__ import annotations

import hashlib
import logging
import re
from concurrent.futures import Future, ThreadPoolExecutor, wait

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import Storage, storages

logger = logging.getLogger(__name__)


def snippet_key(*, act_nreg: str, article: str, ordinal: int) -> str:
    """``lldbi/322-08/st36/c0.txt``: readable, stable across re-ingestion, safe for S3 and filesystems."""
    safe_act = re.sub(r"[^0-9a-zа-яіїєґ_-]+", "_", act_nreg.lower())
    safe_article = re.sub(r"[^0-9a-zа-яіїєґ_-]+", "_", article.lower())
    digest = hashlib.sha1(f"{act_nreg.lower()}#{article}".encode()).hexdigest()[:6]
    return f"lldbi/{safe_act}/st{safe_article}-{digest}/c{ordinal}.txt"


class SnippetLoadError(Exception):
    """A snippet could not be read: missing key, storage timeout, permission. Carries the key."""

    def __init__(self, key: str, cause: BaseException) -> None:
        super().__init__(f"snippet {key!r} could not be loaded: {type(cause).__name__}: {cause}")
        self.key = key
        self.cause = cause


class SnippetStore:
    """A thin face over a Django storage; the seam tests use to point at the filesystem or at S3."""

    def __init__(self, storage: Storage | None = None, *, concurrency: int | None = None,
                 deadline_s: float | None = None) -> None:
        self.storage = storage if storage is not None else storages["snippets"]
        self.concurrency = max(1, concurrency if concurrency is not None else settings.SNIPPET_LOAD_CONCURRENCY)
        self.deadline_s = deadline_s if deadline_s is not None else settings.SNIPPET_LOAD_DEADLINE_S

    def put(self, key: str, text: str) -> None:
        if self.storage.exists(key):
            self.storage.delete(key)
        self.storage.save(key, ContentFile(text.encode("utf-8")))

    def get(self, key: str) -> str:
        """The text under ``key``; any storage failure (filesystem or S3/R2) surfaces as SnippetLoadError."""
        try:
            with self.storage.open(key, "rb") as fh:
                data = fh.read()
            return data.decode("utf-8") if isinstance(data, bytes) else str(data)
        except Exception as exc:  # FileNotFoundError, botocore ClientError/EndpointConnectionError, decode errors
            raise SnippetLoadError(key, exc) from exc

    def get_many(self, keys: list[str]) -> tuple[dict[str, str], list[str]]:
        """Texts by key, and warnings for keys that could not be loaded (excluded, never fatal; seed 000).

        At most ``concurrency`` keys load at once; whatever has not arrived ``deadline_s`` after the start is
        excluded as ``snippet_load_timeout`` (its thread is left to the storage's own timeouts, never joined)."""
        unique = list(dict.fromkeys(keys))
        texts: dict[str, str] = {}
        warnings: list[str] = []
        if not unique:
            return texts, warnings
        pool = ThreadPoolExecutor(max_workers=min(self.concurrency, len(unique)), thread_name_prefix="snippets")
        try:
            futures: dict[str, Future[str]] = {key: pool.submit(self.get, key) for key in unique}
            wait(futures.values(), timeout=self.deadline_s)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        for key, future in futures.items():  # in the order asked, so warnings read the same every time
            if not future.done() or future.cancelled():
                logger.warning("snippet load timed out", extra={"r2_key": key, "deadline_s": self.deadline_s})
                warnings.append(f"snippet_load_timeout:{key}")
                continue
            try:
                texts[key] = future.result()
            except SnippetLoadError as exc:  # the snippet is dropped with a warning, never fatal (U9 reports it)
                logger.warning("snippet load failed", extra={"r2_key": key, "error": str(exc)})
                warnings.append(f"snippet_load_failed:{key}")
        return texts, warnings
