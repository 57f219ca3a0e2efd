"""Search over the Qdrant Edge shards of the law and terms collections (knowledge/edge.py), in process: the methods
and the answers of the numpy index it replaced (same lists on the natural eval sets), so the ranking code above it
does not change. A named vector that knowledge/index.py adds is searched by ``sparse_search`` / its name.

Equal scores come back in one fixed order — the point id, as qdrant-client's local mode orders a scroll, and for a
dense search filtered to several acts the acts' order first — so a search answers the same lists in every process.
Qdrant's own top-k picks arbitrarily among points tied at the cut, so a search fetches past the cut until the last
point fetched scores below it, and orders the ties itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import qdrant_edge as qe
from django.conf import settings

from knowledge import edge, index
from knowledge.lexical import Sparse

Scored = list[tuple[dict[str, Any], float]]

# Points fetched past a search's limit, so that the points tied at the cut can be ordered here (doubled while the
# last one fetched still ties: a heading shared by several codes ties a handful of points, not thousands).
TIE_MARGIN = 8


EXACT = qe.SearchParams(exact=True)  # every float vector scored


def rescored() -> qe.SearchParams:
    """The int8 copies (knowledge/edge.py) scanned, the best LLDBI_DENSE_OVERSAMPLING × limit rescored in float32."""
    return qe.SearchParams(quantization=qe.QuantizationSearchParams(
        rescore=True, oversampling=settings.LLDBI_DENSE_OVERSAMPLING))


def _act_filter(act_keys: Sequence[str], *must: qe.ConditionType) -> qe.Filter | None:
    conditions: list[qe.ConditionType] = list(must)
    if act_keys:
        conditions.append(qe.FieldCondition(key="act_nreg_key", match=qe.MatchAny(any=list(act_keys))))
    return qe.Filter(must=conditions) if conditions else None


def _match(field: str, value: str) -> qe.FieldCondition:
    return qe.FieldCondition(key=field, match=qe.MatchValue(value=value))


class _ShardSearch:
    def __init__(self, shard: edge.Shard | None) -> None:
        self.shard = shard

    def _nearest(self, using: str, vector: Any, act_keys: Sequence[str], limit: int, *,
                 params: qe.SearchParams | None = None, by_act: bool = False,
                 must: Sequence[qe.ConditionType] = ()) -> Scored:
        """The ``limit`` best points for ``vector`` within the acts (and ``must``), searched as ``params`` say
        (``EXACT``, ``rescored()``); ``by_act``: ties in the acts' order first."""
        if self.shard is None or using not in self.shard.vectors or limit <= 0:
            return []
        flt = _act_filter(act_keys, *must)
        fetch = limit + TIE_MARGIN
        while True:
            found = self.shard.engine.query(qe.QueryRequest(
                limit=fetch, query=qe.Query.Nearest(vector, using=using), filter=flt, with_payload=True,
                params=params))
            if len(found) < fetch or found[limit - 1].score != found[-1].score:
                break
            fetch *= 2
        # each read of a point's payload converts it from the engine anew (~5 µs): once a point. The id stays a
        # UUID (ordered as its text is, fixed-width hex; its text cost ~1 ms a question in str() calls)
        rows = [(dict(p.payload or {}), float(p.score), p.id) for p in found]
        acts = {k: i for i, k in reversed(list(enumerate(act_keys)))} if by_act else {}
        rows.sort(key=lambda r: (-r[1], acts.get(str(r[0].get("act_nreg_key")), 0), r[2]))
        return [(payload, score) for payload, score, _ in rows[:limit]]

    def _scroll(self, flt: qe.Filter, limit: int) -> list[dict[str, Any]]:
        """Points matching the filter in id order, as the local mode's scroll returns them."""
        if self.shard is None or limit <= 0:
            return []
        records, _ = self.shard.engine.scroll(qe.ScrollRequest(limit=limit, filter=flt, with_payload=True))
        return [dict(r.payload or {}) for r in records]

    def sparse_search(self, using: str, sparse: Sparse, act_keys: list[str], limit: int,
                      must: Sequence[qe.ConditionType] = ()) -> Scored:
        """BM25 over any named sparse vector of the collection (knowledge/index.py), IDF from the whole shard."""
        if not sparse.indices:
            return []
        return self._nearest(using, qe.SparseVector(indices=list(sparse.indices), values=list(sparse.values)),
                             act_keys, limit, must=must)


class LocalSearchIndex(_ShardSearch):
    """The chunks: dense (one vector per article), BM25 over the text and over the heading, the exact path."""

    def dense_search(self, vector: Sequence[float], act_keys: list[str], limit: int) -> Scored:
        # no graph (knowledge/edge.py): a scan of the int8 copies, the best rescored in float32 — the list and the
        # scores of the exact scan, which the local mode gives (tests/knowledge/test_edge.py)
        return self._nearest(index.DENSE, [float(x) for x in vector], act_keys, limit, params=rescored(), by_act=True)

    def lexical_search(self, sparse: Sparse, act_keys: list[str], limit: int) -> Scored:
        return self.sparse_search(index.LEXICAL, sparse, act_keys, limit)

    def question_words_search(self, sparse: Sparse, act_keys: list[str], limit: int) -> Scored:
        return self.sparse_search(index.QUESTION_WORDS, sparse, act_keys, limit)

    def heading_search(self, sparse: Sparse, act_keys: list[str], limit: int) -> Scored:
        return self.sparse_search(index.HEADING, sparse, act_keys, limit)

    def sentence_search(self, vector: Sequence[float], act_keys: list[str], limit: int,
                        among: Sequence[str] = ()) -> Scored:
        """The articles (their first chunks, which carry index.SENTENCES) within the acts — and among the listed
        first chunks, if any — whose best sentence comes closest to ``vector``: exact MaxSim, as the local mode
        scores it."""
        must = [qe.HasIdCondition({index.point_id(k) for k in among})] if among else []
        return self._nearest(index.SENTENCES, [[float(x) for x in vector]], act_keys, limit, params=EXACT, by_act=True,
                             must=must)

    def points(self) -> int:
        return self.shard.engine.info().points_count if self.shard else 0

    def meaning(self, vector: Sequence[float], chunk_keys: list[str], using: str = index.SENTENCES
                ) -> dict[str, float]:
        """Each listed chunk's best sentence cosine with ``vector`` (index.SENTENCES, on an article's first chunk;
        or its best lay question's: index.QUESTIONS); a shard without such vectors, or a chunk without them, answers
        nothing for it."""
        if self.shard is None or using not in self.shard.vectors or not chunk_keys:
            return {}
        found = self.shard.engine.query(qe.QueryRequest(
            limit=len(chunk_keys), query=qe.Query.Nearest([[float(x) for x in vector]], using=using),
            filter=qe.Filter(must=[qe.HasIdCondition({index.point_id(k) for k in chunk_keys})]), with_payload=True))
        return {str((p.payload or {}).get("chunk_key")): float(p.score) for p in found}

    def lexical_among(self, sparse: Sparse, chunk_keys: list[str]) -> Scored:
        """The listed chunks that share a word with the query, best BM25 first, as index.lexical_among finds them."""
        ids = qe.HasIdCondition({index.point_id(k) for k in chunk_keys})
        return self.sparse_search(index.LEXICAL, sparse, [], len(chunk_keys), must=[ids]) if chunk_keys else []

    def article(self, act_keys: list[str], article: str, limit: int = 20) -> list[dict[str, Any]]:
        """Every chunk of the article in each named act, act by act in the order named; with no act, every act's."""
        if not act_keys:
            return self._scroll(_act_filter([], _match("article", article)) or qe.Filter(), limit)
        found: list[dict[str, Any]] = []
        for key in act_keys:
            found += self._scroll(qe.Filter(must=[_match("article", article), _match("act_nreg_key", key)]),
                                  limit - len(found))
        return found[:limit]


class LocalTermIndex(_ShardSearch):
    """The defined terms: the exact term by its key, near forms by BM25 over the terms' words."""

    def exact(self, key: str, act_keys: list[str], limit: int) -> list[dict[str, Any]]:
        return self._scroll(_act_filter(act_keys, _match("term_key", key)) or qe.Filter(), limit)

    def similar(self, sparse: Sparse, act_keys: list[str], limit: int) -> list[dict[str, Any]]:
        return [p for p, _ in self.sparse_search(index.TERM, sparse, act_keys, limit)]


def get_index(collection: str | None = None) -> LocalSearchIndex:
    name = collection or settings.LLDBI_COLLECTION
    return LocalSearchIndex(edge.ensure_shard(name, index.CHUNK_KEYWORD_FIELDS))


def get_term_index(collection: str | None = None) -> LocalTermIndex:
    name = collection or settings.LLDBI_TERMS_COLLECTION
    return LocalTermIndex(edge.ensure_shard(name, index.TERM_KEYWORD_FIELDS))
