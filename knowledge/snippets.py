"""Chunk texts live in object storage under deterministic keys; the database and RunContext keep only keys."""

from __future__ import annotations

import hashlib
import logging
import re

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

    def __init__(self, storage: Storage | None = None) -> None:
        self.storage = storage if storage is not None else storages["snippets"]

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
        """Texts by key, and warnings for keys that could not be loaded (excluded, never fatal)."""
        texts: dict[str, str] = {}
        warnings: list[str] = []
        for key in dict.fromkeys(keys):
            try:
                texts[key] = self.get(key)
            except SnippetLoadError as exc:  # the snippet is dropped with a warning, never fatal (U9 reports it)
                logger.warning("snippet load failed", extra={"r2_key": key, "error": str(exc)})
                warnings.append(f"snippet_load_failed:{key}")
        return texts, warnings
