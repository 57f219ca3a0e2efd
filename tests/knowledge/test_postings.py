"""The postings both in-process indexes share (knowledge/postings.py): Qdrant's BM25 scoring, the act filter, and
the caches a closed client drops."""

from __future__ import annotations

import math

import pytest

from knowledge import index
from knowledge.indexcache import IndexCache
from knowledge.lexical import Sparse
from knowledge.postings import PointsBuilder, PostingsBuilder


def _idf(df: int, n: int) -> float:
    return math.log((n - df + 0.5) / (df + 0.5) + 1.0)  # Qdrant's IDF modifier


def _points(*acts: str) -> tuple[PointsBuilder, PostingsBuilder]:
    points = PointsBuilder()
    for n, act in enumerate(acts):
        points.add({"chunk_key": f"c{n}", "act_nreg_key": act})
    return points, PostingsBuilder()


def test_a_query_scores_each_point_as_qdrant_does() -> None:
    # given three points: term 7 in two of them, term 9 in one
    builder, postings = _points("a", "a", "b")
    postings.add(0, Sparse([7, 9], [1.5, 0.5]))
    postings.add(1, Sparse([7], [1.0]))
    postings.add(2, None)  # a point without this vector counts in no IDF
    got = builder.build().bm25(postings.build(), Sparse([7, 9], [1.0, 2.0]), [], 10)
    assert [p["chunk_key"] for p, _ in got] == ["c0", "c1"]
    assert [s for _, s in got] == pytest.approx([1.5 * _idf(2, 2) + 0.5 * _idf(1, 2) * 2.0, 1.0 * _idf(2, 2)])


def test_an_act_filter_keeps_the_acts_points_and_nothing_else() -> None:
    builder, postings = _points("a", "b", "b")
    for doc in range(3):
        postings.add(doc, Sparse([1], [1.0 + doc]))
    points, built = builder.build(), postings.build()
    assert [p["chunk_key"] for p, _ in points.bm25(built, Sparse([1], [1.0]), ["b"], 10)] == ["c2", "c1"]
    assert points.bm25(built, Sparse([1], [1.0]), ["unknown"], 10) == []


def test_closing_the_client_drops_every_in_process_index() -> None:
    # given an index built from the client's view of a collection
    cache: IndexCache[object] = IndexCache(lambda client, name: object())
    cache.get(None, "lldbi")  # type: ignore[arg-type]  # the build above never touches the client
    assert cache.has("lldbi")
    index.close_client()  # another process (an ingest) may write next
    assert not cache.has("lldbi")
