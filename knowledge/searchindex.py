"""An in-process, read-only search index over the LLDBI collection, for the local-path Qdrant.

Qdrant's local mode scores sparse vectors point by point in Python and evaluates payload filters the same way:
at 200k chunks a filtered BM25 query takes seconds. This index holds the same vectors as numpy arrays — a dense
matrix (one row per article), BM25 postings per term, an act code per point — and answers in milliseconds with the
same scoring (dot product; BM25 with Qdrant's IDF formula). The collection stays the source of truth: the index is
built from it on first use in a process and dropped when this process writes to it. With a Qdrant server
(``QDRANT_URL``) the server's own indexes are used instead (see engine/ports.py).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, TypeVar

import numpy as np
from qdrant_client import QdrantClient
from threadpoolctl import ThreadpoolController

from knowledge import index
from knowledge.lexical import Sparse, heading_vector

logger = logging.getLogger(__name__)

Scored = list[tuple[dict[str, Any], float]]
T = TypeVar("T")
# BLAS threads for the dense product. One: a search is a 51k x 512 matrix-vector product that one core does in
# a few ms, and a second BLAS thread on a busy machine spins (p95 at 51k: 161 ms with 2 threads beside another
# busy process, 21 ms with 1; README "Retrieval quality"). Set per call through threadpoolctl.
BLAS_THREADS = 1
SCORE_MEMO_SIZE = 8  # queries whose full score arrays are kept (a plan repeats its question across act filters)


@dataclass(frozen=True)
class _Postings:
    terms: np.ndarray  # sorted unique term ids
    starts: np.ndarray  # postings of terms[i] are docs[starts[i]:starts[i + 1]]
    docs: np.ndarray
    weights: np.ndarray
    n_docs: int  # documents with this vector: the N of the IDF


def collect_sparse(into: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]], doc: int, sparse: Any) -> None:
    if sparse is not None and sparse.indices:
        into[0].append(np.asarray(sparse.indices, dtype=np.int64))
        into[1].append(np.full(len(sparse.indices), doc, dtype=np.int32))
        into[2].append(np.asarray(sparse.values, dtype=np.float32))


def build_postings(terms: list[np.ndarray], docs: list[np.ndarray], weights: list[np.ndarray]) -> _Postings:
    all_terms = np.concatenate(terms) if terms else np.zeros(0, np.int64)
    order = np.argsort(all_terms, kind="stable")
    all_terms = all_terms[order]
    uniq, starts = np.unique(all_terms, return_index=True)
    return _Postings(uniq, np.append(starts, len(all_terms)).astype(np.int64),
                     (np.concatenate(docs) if docs else np.zeros(0, np.int32))[order],
                     (np.concatenate(weights) if weights else np.zeros(0, np.float32))[order], len(docs))


class LocalSearchIndex:
    def __init__(self, payloads: list[dict[str, Any]], act_codes: np.ndarray, dense_rows: np.ndarray,
                 dense: np.ndarray, postings: _Postings, act_index: dict[str, int],
                 headings: _Postings | None = None) -> None:
        self.payloads = payloads
        self.act_codes = act_codes
        self.dense_rows = dense_rows
        self.dense = dense
        self.postings = postings
        self.headings = headings or build_postings([], [], [])
        self.act_index = act_index
        self.by_article: dict[tuple[str, str], list[int]] = {}
        self.by_number: dict[str, list[int]] = {}  # an article number named without its act
        for i, p in enumerate(payloads):
            self.by_article.setdefault((str(p.get("act_nreg_key", "")), str(p.get("article", ""))), []).append(i)
            self.by_number.setdefault(str(p.get("article", "")), []).append(i)
        # dense rows per act: a filtered search multiplies only the named acts' rows, not the whole matrix
        order = np.argsort(act_codes[dense_rows], kind="stable") if len(dense_rows) else np.zeros(0, np.int64)
        codes_sorted = act_codes[dense_rows][order] if len(dense_rows) else np.zeros(0, np.int32)
        bounds = np.searchsorted(codes_sorted, np.arange(len(act_index) + 1))
        self._dense_by_act = [order[bounds[c]:bounds[c + 1]] for c in range(len(act_index))]
        # A plan runs the same query with and without an act filter: its scores are computed once.
        self._memo: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]] = {}
        self._memo_lock = threading.Lock()

    @classmethod
    def build(cls, client: QdrantClient, collection: str) -> LocalSearchIndex:
        started = time.monotonic()
        payloads: list[dict[str, Any]] = []
        act_index: dict[str, int] = {}
        codes: list[int] = []
        dense_rows: list[int] = []
        dense: list[list[float]] = []
        lexical: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
        heading: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
        for payload, vectors in index.scan(client, collection):
            i = len(payloads)
            payloads.append(payload)
            codes.append(act_index.setdefault(str(payload.get("act_nreg_key", "")), len(act_index)))
            vectors = vectors if isinstance(vectors, dict) else {}
            if vectors.get(index.DENSE) is not None:
                dense_rows.append(i)
                dense.append(vectors[index.DENSE])
            collect_sparse(lexical, i, vectors.get(index.LEXICAL))
            if payload.get("ordinal") == 0:
                # collections from before the heading field: derive it from the payload the same way ingest does
                collect_sparse(heading, i, vectors.get(index.HEADING) or heading_vector(payload.get("heading")))
        matrix = np.asarray(dense, dtype=np.float32).reshape(len(dense), -1) if dense else np.zeros((0, 1), np.float32)
        if len(matrix):
            matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)  # cosine, as the collection
        built = cls(payloads, np.asarray(codes, dtype=np.int32), np.asarray(dense_rows, dtype=np.int32), matrix,
                    build_postings(*lexical), act_index, build_postings(*heading))
        logger.info("local search index built", extra={"points": len(payloads), "articles_dense": len(dense_rows),
                                                        "seconds": round(time.monotonic() - started, 1)})
        return built

    def _allowed(self, act_keys: list[str]) -> np.ndarray | None:
        if not act_keys:
            return None
        return np.asarray([self.act_index[k] for k in act_keys if k in self.act_index], dtype=np.int32)

    @staticmethod
    def _top(scores: np.ndarray, limit: int) -> np.ndarray:
        if limit <= 0 or not len(scores):
            return np.zeros(0, dtype=np.int64)
        if len(scores) > limit:
            part = np.argpartition(-scores, limit - 1)[:limit]
        else:
            part = np.arange(len(scores))
        return part[np.argsort(-scores[part], kind="stable")]

    def _memoised(self, key: tuple[Any, ...], compute: Callable[[], tuple[np.ndarray, np.ndarray]]
                  ) -> tuple[np.ndarray, np.ndarray]:
        with self._memo_lock:  # workers may search from threads (eager mode in the web process)
            value = self._memo.get(key)
        if value is None:
            value = compute()
            with self._memo_lock:
                while len(self._memo) >= SCORE_MEMO_SIZE:
                    self._memo.pop(next(iter(self._memo)))
                self._memo[key] = value
        return value

    @staticmethod
    def _matvec(matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
        with _blas_controller().limit(limits=BLAS_THREADS, user_api="blas"):
            return matrix @ q

    def dense_search(self, vector: list[float] | np.ndarray, act_keys: list[str], limit: int) -> Scored:
        if not len(self.dense_rows):
            return []
        q = np.asarray(vector, dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        allowed = self._allowed(act_keys)
        if allowed is not None:  # only the named acts' rows (positions into dense_rows)
            rows = (np.concatenate([self._dense_by_act[int(c)] for c in allowed]) if len(allowed)
                    else np.zeros(0, np.int64))
            scores = self._matvec(self.dense[rows], q) if len(rows) else np.zeros(0, np.float32)
        else:
            scores = self._memoised(("dense", q.tobytes()), lambda: (self._matvec(self.dense, q), np.zeros(0)))[0]
            rows = np.arange(len(self.dense_rows))
        top = self._top(scores, limit)
        return [(self.payloads[int(self.dense_rows[rows[i]])], float(scores[i])) for i in top]

    def lexical_search(self, sparse: Sparse, act_keys: list[str], limit: int) -> Scored:
        return self._bm25(self.postings, sparse, act_keys, limit)

    def heading_search(self, sparse: Sparse, act_keys: list[str], limit: int) -> Scored:
        return self._bm25(self.headings, sparse, act_keys, limit)

    def _bm25(self, p: _Postings, sparse: Sparse, act_keys: list[str], limit: int) -> Scored:
        if not sparse.indices or not len(p.terms):
            return []
        scores, candidates = self._memoised(("bm25", id(p), tuple(sparse.indices), tuple(sparse.values)),
                                            lambda: self._bm25_scores(p, sparse))
        allowed = self._allowed(act_keys)
        if allowed is not None:
            candidates = candidates[np.isin(self.act_codes[candidates], allowed)]
        cand_scores = scores[candidates]
        return [(self.payloads[int(candidates[i])], float(cand_scores[i])) for i in self._top(cand_scores, limit)]

    def _bm25_scores(self, p: _Postings, sparse: Sparse) -> tuple[np.ndarray, np.ndarray]:
        """Every point's BM25 score for the query, and the points that scored."""
        scores = np.zeros(len(self.payloads), dtype=np.float32)
        touched = []
        n = max(p.n_docs, 1)
        for term, qv in zip(sparse.indices, sparse.values, strict=True):
            pos = int(np.searchsorted(p.terms, term))
            if pos >= len(p.terms) or int(p.terms[pos]) != term:
                continue
            lo, hi = int(p.starts[pos]), int(p.starts[pos + 1])
            df = hi - lo
            idf = math.log((n - df + 0.5) / (df + 0.5) + 1.0)  # Qdrant's IDF modifier
            scores[p.docs[lo:hi]] += p.weights[lo:hi] * (idf * qv)  # a term occurs once per document
            touched.append(p.docs[lo:hi])
        if not touched:
            return scores, np.zeros(0, dtype=np.int64)
        return scores, np.flatnonzero(scores)  # O(points) once, cheaper than sorting the postings of common terms

    def article(self, act_keys: list[str], article: str, limit: int = 20) -> list[dict[str, Any]]:
        if act_keys:
            idxs = [i for k in act_keys for i in self.by_article.get((k, article), [])]
        else:
            idxs = self.by_number.get(article, [])
        return [self.payloads[i] for i in idxs[:limit]]


class IndexCache(Generic[T]):
    """One in-process index per collection, built on first use and dropped when this process writes to it."""

    def __init__(self, build: Callable[[QdrantClient, str], T]) -> None:
        self._build = build
        self._indexes: dict[str, T] = {}
        self._lock = threading.Lock()

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
