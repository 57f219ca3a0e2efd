"""Users' documents in Qdrant Edge: one immutable shard per document (documents/shards.py, what runs) against one
shard holding every document (what a single writer would keep), on the same points. Not a test: it reports.

Per document: CHUNKS chunks of real Ukrainian text (the demo corpus, BM25 vectors as ingest makes them) and random
384-d unit vectors. For a user with 1, 10, 50 (…) documents it measures the build, the first search of a process
(opening every shard) and warm searches (p50/p95); for the shared shard, filtered to the user, the open (what every
reader would pay again after each write) and warm searches.

    .venv/bin/python bench/docs_shards.py [--docs 1 10 50 200] [--chunks 20] [--queries 40] [--others 200]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.stats import percentile

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lexery.settings")
DIM = 384


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, nargs="+", default=[1, 10, 50, 200], help="documents of one user")
    parser.add_argument("--chunks", type=int, default=20, help="chunks per document")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--others", type=int, default=200,
                        help="other users' documents in the shared shard (what its filter has to skip)")
    return parser.parse_args()


def _texts(n: int) -> list[str]:
    from django.conf import settings

    texts: list[str] = []
    with gzip.open(settings.BASE_DIR / "knowledge" / "corpus" / "core_articles.jsonl.gz", "rt") as fh:
        for line in fh:
            row = json.loads(line)
            text = str(row.get("text") or "")
            texts += [text[i:i + 1200] for i in range(0, min(len(text), 3600), 1200) if text[i:i + 1200].strip()]
            if len(texts) >= n:
                return texts[:n]
    return texts


def _points(n_docs: int, chunks: int, texts: list[str], rng, offset: int, user: str) -> dict[str, list]:
    import numpy as np

    from documents.index import DocPoint
    from knowledge.lexical import document_vector

    out: dict[str, list] = {}
    for d in range(n_docs):
        doc_id = f"{user}-{offset + d:05d}"
        vecs = rng.standard_normal((chunks, DIM)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        out[doc_id] = [DocPoint(chunk_key=f"doc#{doc_id}#c{i}", dense=vecs[i].tolist(),
                                sparse=document_vector(texts[((offset + d) * chunks + i) % len(texts)]),
                                payload={"org_id": 1, "user_ref": user, "document_id": doc_id, "ordinal": i})
                       for i in range(chunks)]
    return out


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def _per_document(docs: dict[str, list], queries: list, limit: int) -> dict[str, float]:
    from documents import shards

    build_ms = [_timed(lambda d=d, pts=pts: shards.build(d, pts, embed_model="bench", dim=DIM))
                for d, pts in docs.items()]
    ids = list(docs)
    dense, sparse = queries[0]
    first = _timed(lambda: shards.search(ids, dense=dense, sparse=sparse, embed_model="bench", limit=limit))
    warm = [_timed(lambda q=q: shards.search(ids, dense=q[0], sparse=q[1], embed_model="bench", limit=limit))
            for q in queries]
    shards._opened.shards.clear()
    return {"build_ms_per_doc": percentile(build_ms, 0.5), "first_search_ms": first,
            "open_ms_per_shard": first / len(ids), "p50_ms": percentile(warm, 0.5), "p95_ms": percentile(warm, 0.95)}


def _shared(path: Path, docs: dict[str, list], user: str, queries: list, limit: int) -> dict[str, float]:
    import qdrant_edge as qe

    from documents import shards
    from knowledge.index import DENSE, LEXICAL, point_id

    config = qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)},
        sparse_vectors={LEXICAL: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}, wal_enabled=False,
        hnsw_config=qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10),
        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=1), max_search_threads=1)
    shard = qe.EdgeShard.create(str(path), config)
    points = [qe.Point(id=point_id(p.chunk_key), payload=p.payload, vector={
        DENSE: p.dense, LEXICAL: qe.SparseVector(indices=list(p.sparse.indices), values=list(p.sparse.values))})
        for pts in docs.values() for p in pts]
    def upsert_all() -> None:
        for i in range(0, len(points), 1024):
            shard.update(qe.UpdateOperation.upsert_points(points[i:i + 1024]))

    build = _timed(upsert_all)
    for field in ("user_ref", "document_id"):
        shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
    shard.optimize()
    shard.flush()
    shard.close()
    opened: list = []
    open_ms = _timed(lambda: opened.append(qe.EdgeShard.load(str(path))))
    engine = opened[0]
    owner = qe.Filter(must=[qe.FieldCondition(key="user_ref", match=qe.MatchValue(value=user))])

    def one(dense, sparse) -> None:
        qs = [qe.QueryRequest(limit=limit, query=qe.Query.Nearest(dense, using=DENSE), filter=owner,
                              with_payload=True, params=qe.SearchParams(exact=True))]
        if sparse.indices:
            qs.append(qe.QueryRequest(limit=limit, query=qe.Query.Nearest(qe.SparseVector(
                indices=list(sparse.indices), values=list(sparse.values)), using=LEXICAL), filter=owner,
                with_payload=True))
        lists = engine.query_batch(qe.QueryBatchRequest(qs))
        shards.fuse([[(str(p.id), dict(p.payload or {})) for p in found] for found in lists], limit)

    warm = [_timed(lambda q=q: one(*q)) for q in queries]
    engine.close()
    return {"upsert_ms_all": build, "open_ms": open_ms, "p50_ms": percentile(warm, 0.5),
            "p95_ms": percentile(warm, 0.95), "points": len(points)}


def main() -> None:
    args = _args()
    import django

    django.setup()
    import numpy as np
    from django.conf import settings

    from knowledge.lexical import query_vector

    rng = np.random.default_rng(7)
    most = max(args.docs)
    texts = _texts((most + args.others) * args.chunks)
    questions = ["Що сказано про штраф за прострочення оплати?", "строк дії договору оренди",
                 "відповідальність сторін за порушення зобов'язання", "порядок розірвання договору"]
    queries = []
    for i in range(args.queries):
        q = rng.standard_normal(DIM).astype(np.float32)
        queries.append(((q / np.linalg.norm(q)).tolist(), query_vector(questions[i % len(questions)])))
    print(f"load: {os.getloadavg()}; chunks per document {args.chunks}; limit {settings.DOCS_MAX_CHUNKS * 3}")
    limit = settings.DOCS_MAX_CHUNKS * 3
    for n in args.docs:
        with tempfile.TemporaryDirectory() as tmp:
            settings.DOCS_SHARDS_DIR = Path(tmp) / "docs"
            mine = _points(n, args.chunks, texts, rng, 0, "u1")
            others = _points(args.others, args.chunks, texts, rng, most, "u2")
            a = _per_document(mine, queries, limit)
            b = _shared(Path(tmp) / "shared", {**mine, **others}, "u1", queries, limit)
        print(json.dumps({"documents": n, "per_document": {k: round(v, 2) for k, v in a.items()},
                          "shared_shard": {k: round(v, 2) for k, v in b.items()}}))


if __name__ == "__main__":
    main()
