"""The users' documents in the embedded engine: one immutable Qdrant Edge shard per uploaded document.

Why one per document (README "Users' documents in the embedded engine" has the measurements): a shard that is never
written after it is built can be opened by any number of processes at once, so several retrieval workers search the
documents with no lock and no writer to coordinate. The index task builds a document's shard under a temporary name
and renames it into place (one ``rename``: a reader sees no shard or the whole shard); a redelivered task finds it
built and leaves it. Deleting a document renames its shard out of the way and removes it; a process that still has
it open keeps reading the files it mapped until it lets go.

BM25 needs the inverse document frequency of the corpus searched. Each shard stores the term-frequency part only
(no IDF modifier) and its manifest the chunk count and each term's document frequency; a search sums them over the
documents it searches (the user's) and weighs the query's terms with Qdrant's own IDF formula — the score a
collection holding exactly those documents would give. The dense vectors are exact cosine, as everywhere.
"""

from __future__ import annotations

import heapq
import json
import logging
import math
import shutil
import threading
import uuid
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import qdrant_edge as qe
from django.conf import settings

from documents.index import DocPoint, fuse
from knowledge.edge import edge_version
from knowledge.index import DENSE, LEXICAL, point_id
from knowledge.lexical import Sparse

logger = logging.getLogger(__name__)

MANIFEST = "manifest.json"
SHARD = "shard"

Scored = list[tuple[dict[str, Any], float]]


def shards_dir() -> Path:
    return Path(settings.DOCS_SHARDS_DIR)


def shard_path(document_id: str) -> Path:
    # flat by document id: the delete task knows only the id (the row is gone), and the database, not the
    # directory, decides whose a document is
    return shards_dir() / str(document_id)


def _config(dim: int) -> qe.EdgeConfig:
    return qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)},
        sparse_vectors={LEXICAL: qe.EdgeSparseVectorParams()},  # no modifier: the IDF is the searched documents'
        wal_enabled=False,  # written once, then only read: what lets several processes open it
        hnsw_config=qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10),  # exact: no graph to build
        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=1),
        max_search_threads=settings.LLDBI_EDGE_SEARCH_THREADS,
    )


def _manifest(document_id: str, points: Sequence[DocPoint], embed_model: str, dim: int) -> dict[str, Any]:
    df: Counter[int] = Counter()
    for p in points:
        df.update(set(p.sparse.indices))
    return {"document_id": str(document_id), "points": len(points), "edge_version": edge_version(),
            "embed_model": embed_model, "dim": dim, "df": {str(t): n for t, n in df.items()}}


def _write_shard(path: Path, points: Sequence[DocPoint], dim: int) -> None:
    shard = qe.EdgeShard.create(str(path), _config(dim))
    try:
        for start in range(0, len(points), settings.LLDBI_SHARD_BUILD_BATCH):
            shard.update(qe.UpdateOperation.upsert_points([
                qe.Point(id=point_id(p.chunk_key), payload=p.payload, vector={
                    DENSE: p.dense, LEXICAL: qe.SparseVector(indices=list(p.sparse.indices),
                                                             values=list(p.sparse.values))})
                for p in points[start:start + settings.LLDBI_SHARD_BUILD_BATCH]]))
        shard.optimize()
        shard.flush()
    finally:
        shard.close()
    qe.EdgeShard.load(str(path)).close()  # the first open completes the files: done before any reader sees them


def build(document_id: str, points: Sequence[DocPoint], *, embed_model: str, dim: int,
          replace: bool = False) -> Path:
    """The document's shard, built once: under a temporary name, then renamed into place. A shard already there
    (a redelivered task, a concurrent one) is the same document's and is kept, unless ``replace`` (a rebuild after
    an upgrade: a search between the two renames skips this one document)."""
    final = shard_path(document_id)
    if (final / MANIFEST).exists():
        if not replace:
            return final
        remove(document_id)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".build-{document_id}-{uuid.uuid4().hex[:8]}"
    try:
        _write_shard(tmp / SHARD, points, dim)
        (tmp / MANIFEST).write_text(json.dumps(_manifest(document_id, points, embed_model, dim)))
        try:
            tmp.rename(final)  # atomic; fails when another build got there first (a non-empty target)
        except OSError:
            if not (final / MANIFEST).exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def remove(document_id: str) -> None:
    """Drop the document's shard: renamed away first, so no reader opens half a deleted directory."""
    path = shard_path(document_id)
    if not path.exists():
        return
    gone = path.parent / f".deleted-{document_id}-{uuid.uuid4().hex[:8]}"
    try:
        path.rename(gone)
    except FileNotFoundError:  # another delete won
        return
    shutil.rmtree(gone, ignore_errors=True)
    _opened.drop(str(document_id))


def exists(document_id: str) -> bool:
    return (shard_path(document_id) / MANIFEST).exists()


def _read_manifest(document_id: str) -> dict[str, Any] | None:
    try:
        return dict(json.loads((shard_path(document_id) / MANIFEST).read_text()))
    except FileNotFoundError:
        return None


def is_current(document_id: str, *, embed_model: str) -> bool:
    """The document has a shard this qdrant-edge version wrote with this embedding model."""
    manifest = _read_manifest(document_id)
    return manifest is not None and manifest.get("edge_version") == edge_version() and \
        manifest.get("embed_model") == embed_model


def point_count(document_id: str) -> int:
    """The chunks the document's shard holds; 0 without one."""
    manifest = _read_manifest(document_id)
    return int(manifest["points"]) if manifest else 0


@dataclass(frozen=True)
class OpenDoc:
    engine: qe.EdgeShard
    points: int
    df: dict[int, int]
    embed_model: str


class _Opened:
    """Open shards of this process by document id, least recently searched dropped first (DOCS_SHARDS_OPEN_MAX).
    A shard never changes, so one stays valid until its document is deleted. A dropped one is not closed: a search
    in another thread may still hold it, and it closes when the last reference goes."""

    def __init__(self) -> None:
        self.shards: OrderedDict[str, OpenDoc] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, document_id: str) -> OpenDoc | None:
        with self.lock:
            have = self.shards.get(document_id)
            if have is not None:
                self.shards.move_to_end(document_id)
                return have
        opened = _load(document_id)
        if opened is None:
            return None
        with self.lock:
            self.shards[document_id] = opened
            while len(self.shards) > settings.DOCS_SHARDS_OPEN_MAX:
                self.shards.popitem(last=False)
        return opened

    def drop(self, document_id: str) -> None:
        with self.lock:
            self.shards.pop(document_id, None)


_opened = _Opened()


def _load(document_id: str) -> OpenDoc | None:
    manifest = _read_manifest(document_id)
    if manifest is None:
        return None
    if manifest.get("edge_version") != edge_version():
        logger.warning("document shard of another qdrant-edge version: not searched until rebuilt "
                       "(manage.py build_search_shards)", extra={"document": document_id})
        return None
    return OpenDoc(qe.EdgeShard.load(str(shard_path(document_id) / SHARD)), int(manifest["points"]),
                   {int(t): int(n) for t, n in manifest["df"].items()}, str(manifest.get("embed_model", "")))


def forget(document_id: str) -> None:
    """Open the document's shard again on its next search, as a fresh process would (a test of an upgrade)."""
    _opened.drop(str(document_id))


def idf(n_points: int, df: int) -> float:
    """Qdrant's IDF modifier, ln(1 + (N - n + 0.5) / (n + 0.5)): the same weight a collection of these points gives."""
    return math.log(1 + (n_points - df + 0.5) / (df + 0.5))


def _weighted(sparse: Sparse, docs: Sequence[OpenDoc]) -> qe.SparseVector | None:
    n = sum(d.points for d in docs)
    pairs = [(t, v * idf(n, sum(d.df.get(t, 0) for d in docs))) for t, v in zip(sparse.indices, sparse.values,
                                                                                    strict=True)]
    pairs = [(t, w) for t, w in pairs if w > 0]
    return qe.SparseVector(indices=[t for t, _ in pairs], values=[w for _, w in pairs]) if pairs else None


Hit = tuple[float, str, int]  # score, point id, index of the document's shard in the search


def _best(hits: list[Hit], limit: int) -> list[Hit]:
    """The best ``limit`` over every shard's list; equal scores in point-id order, the same in every process."""
    return sorted(hits, key=lambda h: (-h[0], h[1]))[:limit]


class _Best:
    """The candidates of one list across shards that may still make its best ``limit``: a shard's points come best
    first, so its list is read only while a point scores at least the ``limit``-th best so far (ties kept, ordered
    later). Reading every point of every shard cost more than the searches (bench/docs_shards.py)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.hits: list[Hit] = []
        self._scores: list[float] = []  # a min-heap of the best ``limit`` scores

    def add(self, found: list[qe.ScoredPoint], n: int) -> None:
        for p in found:
            score = float(p.score)
            if len(self._scores) >= self.limit:
                if score < self._scores[0]:
                    return
                heapq.heappushpop(self._scores, score)
            else:
                heapq.heappush(self._scores, score)
            self.hits.append((score, str(p.id), n))


def _searchable(document_ids: Sequence[str], embed_model: str) -> list[OpenDoc]:
    docs = []
    for document_id in document_ids:
        doc = _opened.get(str(document_id))
        if doc is None:
            continue
        if doc.embed_model != embed_model:  # unlike vectors: rebuilt by build_search_shards, skipped until then
            logger.warning("document shard of another embedding model: not searched", extra={
                "document": document_id, "model": doc.embed_model})
            continue
        docs.append(doc)
    return docs


def _payloads(docs: Sequence[OpenDoc], ranked: Sequence[list[Hit]]) -> dict[str, dict[str, Any]]:
    """The payloads of the points that made a list, fetched from their shards after the merge: converting every
    candidate's payload cost more than the searches themselves (bench/docs_shards.py)."""
    wanted: dict[int, set[str]] = {}
    for hits in ranked:
        for _, pid, n in hits:
            wanted.setdefault(n, set()).add(pid)
    return {str(r.id): dict(r.payload or {}) for n, ids in wanted.items()
            for r in docs[n].engine.retrieve(sorted(ids), with_payload=True, with_vector=False)}


def search(document_ids: Sequence[str], *, dense: list[float], sparse: Sparse, embed_model: str,
           limit: int) -> Scored:
    """The best chunks of these documents by reciprocal-rank fusion of dense and BM25, scored 0..1 (1: first in
    both): each shard is asked for its best ``limit`` of each, and the lists are merged by score."""
    docs = _searchable(document_ids, embed_model)
    if not docs or limit <= 0:
        return []
    weighted = _weighted(sparse, docs)
    dense_query = qe.QueryRequest(limit=limit, query=qe.Query.Nearest(dense, using=DENSE), with_payload=False,
                                  params=qe.SearchParams(exact=True))
    dense_only = qe.QueryBatchRequest([dense_query])
    both = qe.QueryBatchRequest([dense_query, qe.QueryRequest(
        limit=limit, query=qe.Query.Nearest(weighted, using=LEXICAL), with_payload=False)]) if weighted else None
    terms = set(weighted.indices) if weighted else set()
    lists = (_Best(limit), _Best(limit))
    for n, doc in enumerate(docs):
        # a shard holding none of the question's terms has no BM25 hit: only its dense list is asked for
        batch = both if both is not None and not terms.isdisjoint(doc.df) else dense_only
        for found, best in zip(doc.engine.query_batch(batch), lists, strict=False):
            best.add(found, n)
    ranked = [_best(best.hits, limit) for best in lists]
    payloads = _payloads(docs, ranked)
    return fuse([[(pid, payloads[pid]) for _, pid, _ in hits] for hits in ranked], limit)
