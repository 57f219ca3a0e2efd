"""The defined-terms collection held in process, for the local-path Qdrant (as knowledge/searchindex.py holds the
chunks): an exact table from term key to points and BM25 postings over the terms' words for near forms."""

from __future__ import annotations

import logging
import time
from typing import Any

from qdrant_client import QdrantClient

from knowledge import index
from knowledge.indexcache import IndexCache
from knowledge.lexical import Sparse
from knowledge.postings import Points, PointsBuilder, Postings, PostingsBuilder

logger = logging.getLogger(__name__)


class LocalTermIndex:
    def __init__(self, points: Points, postings: Postings) -> None:
        self.points = points
        self.payloads = points.payloads
        self.postings = postings
        self.by_key: dict[str, list[int]] = {}
        for i, p in enumerate(self.payloads):
            self.by_key.setdefault(str(p.get("term_key", "")), []).append(i)

    @classmethod
    def build(cls, client: QdrantClient, collection: str) -> LocalTermIndex:
        started = time.monotonic()
        points, terms = PointsBuilder(), PostingsBuilder()
        for payload, vectors in index.scan(client, collection):
            i = points.add(payload)
            terms.add(i, (vectors or {}).get(index.TERM) if isinstance(vectors, dict) else None)
        built = cls(points.build(), terms.build())
        logger.info("local term index built", extra={"terms": len(built.payloads),
                                                      "seconds": round(time.monotonic() - started, 1)})
        return built

    def exact(self, key: str, act_keys: list[str], limit: int) -> list[dict[str, Any]]:
        found = [self.payloads[i] for i in self.by_key.get(key, [])]
        if act_keys:
            found = [p for p in found if p.get("act_nreg_key") in act_keys]
        return found[:limit]

    def similar(self, sparse: Sparse, act_keys: list[str], limit: int) -> list[dict[str, Any]]:
        return [p for p, _ in self.points.bm25(self.postings, sparse, act_keys, limit)]


_cache: IndexCache[LocalTermIndex] = IndexCache(LocalTermIndex.build)


def get_term_index(client: QdrantClient, collection: str) -> LocalTermIndex:
    return _cache.get(client, collection)


def is_built(collection: str) -> bool:
    return _cache.has(collection)


def invalidate(collection: str | None = None) -> None:
    _cache.invalidate(collection)
