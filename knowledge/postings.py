"""BM25 postings held in process, and their search: the part both in-process indexes share (the chunks,
knowledge/searchindex.py; the defined terms, knowledge/termindex.py).

Each point's sparse vector becomes, per term, the points holding it and their weights. A query scores a point as
Qdrant does: the sum over the query's terms of the point's weight × Qdrant's IDF × the query's value, so the
in-process index ranks as the collection would. Pure numpy: nothing here opens Qdrant.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from knowledge.lexical import Sparse

Scored = list[tuple[dict[str, Any], float]]
SCORE_MEMO_SIZE = 8  # queries whose full score arrays are kept (a plan repeats its question across act filters)


@dataclass(frozen=True)
class Postings:
    terms: np.ndarray  # sorted unique term ids
    starts: np.ndarray  # postings of terms[i] are docs[starts[i]:starts[i + 1]]
    docs: np.ndarray
    weights: np.ndarray
    n_docs: int  # documents with this vector: the N of the IDF

    def scores(self, sparse: Sparse, n_points: int) -> tuple[np.ndarray, np.ndarray]:
        """Every point's BM25 score for the query, and the points that scored."""
        scores = np.zeros(n_points, dtype=np.float32)
        touched = []
        n = max(self.n_docs, 1)
        for term, qv in zip(sparse.indices, sparse.values, strict=True):
            pos = int(np.searchsorted(self.terms, term))
            if pos >= len(self.terms) or int(self.terms[pos]) != term:
                continue
            lo, hi = int(self.starts[pos]), int(self.starts[pos + 1])
            df = hi - lo
            idf = math.log((n - df + 0.5) / (df + 0.5) + 1.0)  # Qdrant's IDF modifier
            scores[self.docs[lo:hi]] += self.weights[lo:hi] * (idf * qv)  # a term occurs once per document
            touched.append(self.docs[lo:hi])
        if not touched:
            return scores, np.zeros(0, dtype=np.int64)
        return scores, np.flatnonzero(scores)  # O(points) once, cheaper than sorting the postings of common terms


class PostingsBuilder:
    """Collects the points' sparse vectors while a collection is scanned; ``build`` sorts them into postings."""

    def __init__(self) -> None:
        self._terms: list[np.ndarray] = []
        self._docs: list[np.ndarray] = []
        self._weights: list[np.ndarray] = []

    def add(self, doc: int, sparse: Any) -> None:
        """``sparse``: anything with ``indices`` and ``values`` (a Qdrant vector or ours); None: the point has none."""
        if sparse is not None and sparse.indices:
            self._terms.append(np.asarray(sparse.indices, dtype=np.int64))
            self._docs.append(np.full(len(sparse.indices), doc, dtype=np.int32))
            self._weights.append(np.asarray(sparse.values, dtype=np.float32))

    def build(self) -> Postings:
        all_terms = np.concatenate(self._terms) if self._terms else np.zeros(0, np.int64)
        order = np.argsort(all_terms, kind="stable")
        all_terms = all_terms[order]
        uniq, starts = np.unique(all_terms, return_index=True)
        return Postings(uniq, np.append(starts, len(all_terms)).astype(np.int64),
                        (np.concatenate(self._docs) if self._docs else np.zeros(0, np.int32))[order],
                        (np.concatenate(self._weights) if self._weights else np.zeros(0, np.float32))[order],
                        len(self._docs))


def top(scores: np.ndarray, limit: int) -> np.ndarray:
    """Positions of the ``limit`` best scores, best first (a stable order among equal scores)."""
    if limit <= 0 or not len(scores):
        return np.zeros(0, dtype=np.int64)
    if len(scores) > limit:
        part = np.argpartition(-scores, limit - 1)[:limit]
    else:
        part = np.arange(len(scores))
    return part[np.argsort(-scores[part], kind="stable")]


class Points:
    """The points of an in-process index: their payloads, an act code per point (an act filter is then an integer
    test, not a payload lookup), and the full score arrays of the last few queries."""

    def __init__(self, payloads: list[dict[str, Any]], act_codes: np.ndarray, act_index: dict[str, int]) -> None:
        self.payloads = payloads
        self.act_codes = act_codes
        self.act_index = act_index
        # A plan runs the same query with and without an act filter: its scores are computed once.
        self._memo: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]] = {}
        self._memo_lock = threading.Lock()

    def allowed(self, act_keys: list[str]) -> np.ndarray | None:
        """The act codes a filter admits; None: no filter."""
        if not act_keys:
            return None
        return np.asarray([self.act_index[k] for k in act_keys if k in self.act_index], dtype=np.int32)

    def memoised(self, key: tuple[Any, ...], compute: Callable[[], tuple[np.ndarray, np.ndarray]]
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

    def bm25(self, postings: Postings, sparse: Sparse, act_keys: list[str], limit: int) -> Scored:
        """The ``limit`` best points for the query within the acts (all acts when none are given)."""
        if not sparse.indices or not len(postings.terms):
            return []
        scores, candidates = self.memoised(("bm25", id(postings), tuple(sparse.indices), tuple(sparse.values)),
                                           lambda: postings.scores(sparse, len(self.payloads)))
        allowed = self.allowed(act_keys)
        if allowed is not None:
            candidates = candidates[np.isin(self.act_codes[candidates], allowed)]
        cand_scores = scores[candidates]
        return [(self.payloads[int(candidates[i])], float(cand_scores[i])) for i in top(cand_scores, limit)]


class PointsBuilder:
    """Collects the payloads while a collection is scanned, coding each point's act."""

    def __init__(self) -> None:
        self.payloads: list[dict[str, Any]] = []
        self._act_index: dict[str, int] = {}
        self._codes: list[int] = []

    def add(self, payload: dict[str, Any]) -> int:
        """The point's position, which its postings and dense row refer to."""
        self.payloads.append(payload)
        self._codes.append(self._act_index.setdefault(str(payload.get("act_nreg_key", "")), len(self._act_index)))
        return len(self.payloads) - 1

    def build(self) -> Points:
        return Points(self.payloads, np.asarray(self._codes, dtype=np.int32), self._act_index)
