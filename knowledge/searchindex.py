"""An in-process, read-only search index over the LLDBI collection, for the local-path Qdrant.

Qdrant's local mode scores sparse vectors point by point in Python and evaluates payload filters the same way:
at 200k chunks a filtered BM25 query takes seconds. This index holds the same vectors as numpy arrays — a dense
matrix (one row per article), BM25 postings per term (knowledge/postings.py), an act code per point — and answers
in milliseconds with the same scoring (dot product; BM25 with Qdrant's IDF formula). The collection stays the
source of truth: the index is built from it on first use in a process and dropped when this process writes to it.
With a Qdrant server (``QDRANT_URL``) the server's own indexes are used instead (see engine/ports.py).
"""

from __future__ import annotations

import logging
import time
from functools import lru_cache
from typing import Any

import numpy as np
from qdrant_client import QdrantClient
from threadpoolctl import ThreadpoolController

from knowledge import index
from knowledge.indexcache import IndexCache
from knowledge.lexical import Sparse, heading_vector
from knowledge.postings import Points, PointsBuilder, Postings, PostingsBuilder, Scored, top

logger = logging.getLogger(__name__)

# BLAS threads for the dense product. One: a search is a 51k x 512 matrix-vector product that one core does in
# a few ms, and a second BLAS thread on a busy machine spins (p95 at 51k: 161 ms with 2 threads beside another
# busy process, 21 ms with 1; README "Retrieval quality"). Set per call through threadpoolctl.
BLAS_THREADS = 1


class LocalSearchIndex:
    def __init__(self, points: Points, dense_rows: np.ndarray, dense: np.ndarray, postings: Postings,
                 headings: Postings | None = None) -> None:
        self.points = points
        self.payloads = points.payloads
        self.dense_rows = dense_rows
        self.dense = dense
        self.postings = postings
        self.headings = headings or PostingsBuilder().build()
        self.by_article: dict[tuple[str, str], list[int]] = {}
        self.by_number: dict[str, list[int]] = {}  # an article number named without its act
        for i, p in enumerate(self.payloads):
            self.by_article.setdefault((str(p.get("act_nreg_key", "")), str(p.get("article", ""))), []).append(i)
            self.by_number.setdefault(str(p.get("article", "")), []).append(i)
        # dense rows per act: a filtered search multiplies only the named acts' rows, not the whole matrix
        act_codes, n_acts = points.act_codes, len(points.act_index)
        order = np.argsort(act_codes[dense_rows], kind="stable") if len(dense_rows) else np.zeros(0, np.int64)
        codes_sorted = act_codes[dense_rows][order] if len(dense_rows) else np.zeros(0, np.int32)
        bounds = np.searchsorted(codes_sorted, np.arange(n_acts + 1))
        self._dense_by_act = [order[bounds[c]:bounds[c + 1]] for c in range(n_acts)]

    @classmethod
    def build(cls, client: QdrantClient, collection: str) -> LocalSearchIndex:
        started = time.monotonic()
        points, lexical, heading = PointsBuilder(), PostingsBuilder(), PostingsBuilder()
        dense_rows: list[int] = []
        dense: list[list[float]] = []
        for payload, vectors in index.scan(client, collection):
            i = points.add(payload)
            vectors = vectors if isinstance(vectors, dict) else {}
            if vectors.get(index.DENSE) is not None:
                dense_rows.append(i)
                dense.append(vectors[index.DENSE])
            lexical.add(i, vectors.get(index.LEXICAL))
            if payload.get("ordinal") == 0:
                # collections from before the heading field: derive it from the payload the same way ingest does
                heading.add(i, vectors.get(index.HEADING) or heading_vector(payload.get("heading")))
        matrix = np.asarray(dense, dtype=np.float32).reshape(len(dense), -1) if dense else np.zeros((0, 1), np.float32)
        if len(matrix):
            matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)  # cosine, as the collection
        built = cls(points.build(), np.asarray(dense_rows, dtype=np.int32), matrix, lexical.build(), heading.build())
        logger.info("local search index built", extra={"points": len(built.payloads), "articles_dense": len(dense_rows),
                                                        "seconds": round(time.monotonic() - started, 1)})
        return built

    @staticmethod
    def _matvec(matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
        with _blas_controller().limit(limits=BLAS_THREADS, user_api="blas"):
            scores: np.ndarray = matrix @ q
        return scores

    def dense_search(self, vector: list[float] | np.ndarray, act_keys: list[str], limit: int) -> Scored:
        if not len(self.dense_rows):
            return []
        q = np.asarray(vector, dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        allowed = self.points.allowed(act_keys)
        if allowed is not None:  # only the named acts' rows (positions into dense_rows)
            rows = (np.concatenate([self._dense_by_act[int(c)] for c in allowed]) if len(allowed)
                    else np.zeros(0, np.int64))
            scores = self._matvec(self.dense[rows], q) if len(rows) else np.zeros(0, np.float32)
        else:
            scores = self.points.memoised(("dense", q.tobytes()),
                                          lambda: (self._matvec(self.dense, q), np.zeros(0)))[0]
            rows = np.arange(len(self.dense_rows))
        return [(self.payloads[int(self.dense_rows[rows[i]])], float(scores[i])) for i in top(scores, limit)]

    def lexical_search(self, sparse: Sparse, act_keys: list[str], limit: int) -> Scored:
        return self.points.bm25(self.postings, sparse, act_keys, limit)

    def heading_search(self, sparse: Sparse, act_keys: list[str], limit: int) -> Scored:
        return self.points.bm25(self.headings, sparse, act_keys, limit)

    def article(self, act_keys: list[str], article: str, limit: int = 20) -> list[dict[str, Any]]:
        if act_keys:
            idxs = [i for k in act_keys for i in self.by_article.get((k, article), [])]
        else:
            idxs = self.by_number.get(article, [])
        return [self.payloads[i] for i in idxs[:limit]]


@lru_cache(maxsize=1)
def _blas_controller() -> ThreadpoolController:
    return ThreadpoolController()  # finds the loaded BLAS once, not on every search


_cache: IndexCache[LocalSearchIndex] = IndexCache(LocalSearchIndex.build)


def get_index(client: QdrantClient, collection: str) -> LocalSearchIndex:
    return _cache.get(client, collection)


def is_built(collection: str) -> bool:
    return _cache.has(collection)


def invalidate(collection: str | None = None) -> None:
    """Called after this process wrote to the collection: the next search rebuilds from it."""
    _cache.invalidate(collection)
