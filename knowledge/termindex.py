"""The defined-terms collection held in process, for the local-path Qdrant (as knowledge/searchindex.py holds the
chunks): an exact table from term key to points and BM25 postings over the terms' words for near forms."""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
from qdrant_client import QdrantClient

from knowledge import index
from knowledge.lexical import Sparse
from knowledge.searchindex import IndexCache, LocalSearchIndex, build_postings, collect_sparse

logger = logging.getLogger(__name__)


class LocalTermIndex:
    def __init__(self, payloads: list[dict[str, Any]], postings_index: LocalSearchIndex) -> None:
        self.payloads = payloads
        self._bm25 = postings_index  # reuses the chunk index's BM25 and act filter over the term points
        self.by_key: dict[str, list[int]] = {}
        for i, p in enumerate(payloads):
            self.by_key.setdefault(str(p.get("term_key", "")), []).append(i)

    @classmethod
    def build(cls, client: QdrantClient, collection: str) -> LocalTermIndex:
        started = time.monotonic()
        payloads: list[dict[str, Any]] = []
        act_index: dict[str, int] = {}
        codes: list[int] = []
        terms: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
        for payload, vectors in index.scan(client, collection):
            i = len(payloads)
            payloads.append(payload)
            codes.append(act_index.setdefault(str(payload.get("act_nreg_key", "")), len(act_index)))
            collect_sparse(terms, i, (vectors or {}).get(index.TERM) if isinstance(vectors, dict) else None)
        bm25 = LocalSearchIndex(payloads, np.asarray(codes, dtype=np.int32), np.zeros(0, np.int32),
                                np.zeros((0, 1), np.float32), build_postings(*terms), act_index)
        logger.info("local term index built", extra={"terms": len(payloads),
                                                      "seconds": round(time.monotonic() - started, 1)})
        return cls(payloads, bm25)

    def exact(self, key: str, act_keys: list[str], limit: int) -> list[dict[str, Any]]:
        found = [self.payloads[i] for i in self.by_key.get(key, [])]
        if act_keys:
            found = [p for p in found if p.get("act_nreg_key") in act_keys]
        return found[:limit]

    def similar(self, sparse: Sparse, act_keys: list[str], limit: int) -> list[dict[str, Any]]:
        return [p for p, _ in self._bm25.lexical_search(sparse, act_keys, limit)]


_cache: IndexCache[LocalTermIndex] = IndexCache(LocalTermIndex.build)


def get_term_index(client: QdrantClient, collection: str) -> LocalTermIndex:
    return _cache.get(client, collection)


def is_built(collection: str) -> bool:
    return _cache.has(collection)


def invalidate(collection: str | None = None) -> None:
    _cache.invalidate(collection)
