"""One in-process index per collection, built on first use and dropped when this process writes to it.

Every cache registers itself here, so closing the Qdrant client (knowledge/index.py) drops them all without
index.py knowing which indexes exist: the indexes are built from the client, not the other way round."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from qdrant_client import QdrantClient

T = TypeVar("T")

_caches: list[IndexCache[Any]] = []


class IndexCache(Generic[T]):
    def __init__(self, build: Callable[[QdrantClient, str], T]) -> None:
        self._build = build
        self._indexes: dict[str, T] = {}
        self._lock = threading.Lock()
        _caches.append(self)

    def get(self, client: QdrantClient, collection: str) -> T:
        with self._lock:
            if collection not in self._indexes:
                self._indexes[collection] = self._build(client, collection)
            return self._indexes[collection]

    def has(self, collection: str) -> bool:
        return collection in self._indexes

    def invalidate(self, collection: str | None = None) -> None:
        with self._lock:
            if collection is None:
                self._indexes.clear()
            else:
                self._indexes.pop(collection, None)


def invalidate_all() -> None:
    """Drop every in-process index: they were built from a client's view, and another process may write next."""
    for cache in _caches:
        cache.invalidate()
