"""The LLDBI collection in Qdrant: one point per chunk, a dense and a sparse (BM25) vector, refs in the payload.

A local-path Qdrant can be opened by one process only. The web process never touches it (runs are enqueued,
never retrieved in a request); workers and management commands open it lazily through ``get_client``.
"""

from __future__ import annotations

import atexit
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from knowledge.lexical import Sparse

if TYPE_CHECKING:
    from qdrant_client import QdrantClient, models
else:
    from knowledge.qdrant_models import models  # imported when first used: see there

DENSE = "dense"
LEXICAL = "lexical"
HEADING = "heading"  # BM25 over the article heading alone, on the article's first chunk
# e5 vectors of the article's first sentences, on its first chunk, compared by their best match (MaxSim): what U4's
# meaning rerank reads (pipeline/stages/retrieval.py)
SENTENCES = "sentences"
# the lay questions alone (they are among the SENTENCES too), on the article's first chunk: U4 reads how close a
# question people ask of an article comes to the user's (pipeline/stages/retrieval.py rerank_by_questions)
QUESTIONS = "questions"
# BM25 over the article's lay questions alone, on its first chunk: the words people use for what the article says
QUESTION_WORDS = "question_words"
TERM = "term"  # in the terms collection: BM25 over one defined term's words (legaltext/definitions.py)
# The payload fields the act filter and the exact lookups match on: indexed by a Qdrant server and in the Edge shards
CHUNK_KEYWORD_FIELDS = ("act_nreg_key", "article")
TERM_KEYWORD_FIELDS = ("act_nreg_key", "term_key")
_POINT_NS = uuid.UUID("6f1c7c52-6a4e-4d0e-9a57-0d1f3f0c2b11")
POINT_IDS_KEPT = 65_536  # chunk keys whose point id a process keeps (~10 MB)

_client: QdrantClient | None = None
_client_lock = threading.Lock()


def get_client() -> QdrantClient:
    global _client
    with _client_lock:
        if _client is None:
            from django.conf import settings
            from qdrant_client import QdrantClient

            if settings.QDRANT_URL:
                _client = QdrantClient(url=settings.QDRANT_URL, api_key=settings.QDRANT_API_KEY or None)
            else:
                settings.QDRANT_PATH.mkdir(parents=True, exist_ok=True)
                _client = QdrantClient(path=str(settings.QDRANT_PATH))
                atexit.register(close_client)  # flush and unlock before the interpreter tears modules down
        return _client


def close_client() -> None:
    """Release the local store so another process (an ingest, a shard build) can open it."""
    global _client
    with _client_lock:
        if _client is not None:
            _client.close()
            _client = None


def held_client() -> QdrantClient | None:
    """The client this process has open, if any; never opens one (readiness must not take the local path)."""
    return _client


@lru_cache(maxsize=POINT_IDS_KEPT)
def point_id(chunk_key: str) -> str:
    """Deterministic ids make re-ingestion an overwrite, never a duplicate. Kept per process: a question names
    ~150 candidate chunks by id (the searches among them), and a SHA-1 each cost ~4 ms of U4."""
    return str(uuid.uuid5(_POINT_NS, chunk_key))


class CollectionMismatch(Exception):
    """The collection was built with another embedding model: searching it would compare unlike vectors."""


def ensure_collection(client: QdrantClient, name: str, dim: int, *, payload_indexes: bool) -> None:
    if client.collection_exists(name):
        vectors = client.get_collection(name).config.params.vectors
        have = vectors.get(DENSE) if isinstance(vectors, dict) else None
        if have is not None and have.size != dim:
            raise CollectionMismatch(
                f"collection {name!r} holds {have.size}-d vectors but the embedding model gives {dim}-d: "
                "use another LLDBI_COLLECTION (or LEXERY_VAR_DIR) per EMBEDDING_MODEL")
        return
    client.create_collection(
        name,
        vectors_config={DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE),
                        SENTENCES: models.VectorParams(
                            size=dim, distance=models.Distance.COSINE,
                            multivector_config=models.MultiVectorConfig(
                                comparator=models.MultiVectorComparator.MAX_SIM)),
                        # read for a step's first five articles only, never scanned: kept on disk (mapped)
                        QUESTIONS: models.VectorParams(
                            size=dim, distance=models.Distance.COSINE, on_disk=True,
                            multivector_config=models.MultiVectorConfig(
                                comparator=models.MultiVectorComparator.MAX_SIM))},
        sparse_vectors_config={LEXICAL: models.SparseVectorParams(modifier=models.Modifier.IDF),
                               HEADING: models.SparseVectorParams(modifier=models.Modifier.IDF),
                               QUESTION_WORDS: models.SparseVectorParams(modifier=models.Modifier.IDF)},
    )
    if payload_indexes:  # a Qdrant server filters faster with them; the local mode ignores them
        for field in CHUNK_KEYWORD_FIELDS:
            client.create_payload_index(name, field, models.PayloadSchemaType.KEYWORD)


@dataclass(frozen=True)
class IndexedPoint:
    chunk_key: str
    dense: list[float] | None  # one dense vector per article, on its first chunk
    sparse: Sparse
    payload: dict[str, Any]
    heading: Sparse | None = None  # on the first chunk of an article with a heading
    sentences: list[list[float]] | None = None  # on the first chunk: its article's sentence vectors
    questions: list[list[float]] | None = None  # on the first chunk: its article's lay questions' vectors
    question_words: Sparse | None = None  # on the first chunk: BM25 over its article's lay questions


def _vectors(p: IndexedPoint) -> dict[str, Any]:
    out: dict[str, Any] = {LEXICAL: models.SparseVector(indices=p.sparse.indices, values=p.sparse.values)}
    if p.dense is not None:
        out[DENSE] = p.dense
    if p.heading is not None:
        out[HEADING] = models.SparseVector(indices=p.heading.indices, values=p.heading.values)
    if p.sentences:
        out[SENTENCES] = p.sentences
    if p.questions:
        out[QUESTIONS] = p.questions
    if p.question_words is not None:
        out[QUESTION_WORDS] = models.SparseVector(indices=p.question_words.indices, values=p.question_words.values)
    return out


def has_sparse(client: QdrantClient, name: str, vector: str) -> bool:
    """Collections built before the heading field existed lack it; search then goes without that signal."""
    if not client.collection_exists(name):
        return False
    return vector in (client.get_collection(name).config.params.sparse_vectors or {})


def has_dense(client: QdrantClient, name: str, vector: str) -> bool:
    """Collections built before the sentence vectors existed lack them; U4 then ranks without the meaning rerank."""
    if not client.collection_exists(name):
        return False
    vectors = client.get_collection(name).config.params.vectors
    return isinstance(vectors, dict) and vector in vectors


def upsert(client: QdrantClient, name: str, points: list[IndexedPoint]) -> None:
    client.upsert(
        name,
        points=[models.PointStruct(id=point_id(p.chunk_key), vector=_vectors(p), payload=p.payload)
                for p in points],
        wait=True,
    )


def existing_ids(client: QdrantClient, name: str, ids: list[str]) -> set[str]:
    if not ids or not client.collection_exists(name):
        return set()
    return {str(r.id) for r in client.retrieve(name, ids=ids, with_payload=False, with_vectors=False)}


def _act_filter(act_keys: list[str]) -> models.Filter | None:
    if not act_keys:
        return None
    return models.Filter(must=[models.FieldCondition(key="act_nreg_key", match=models.MatchAny(any=act_keys))])


def dense_search(client: QdrantClient, name: str, *, vector: list[float], act_keys: list[str],
                 limit: int) -> list[tuple[dict[str, Any], float]]:
    result = client.query_points(name, query=vector, using=DENSE, query_filter=_act_filter(act_keys),
                                 limit=limit, with_payload=True)
    return [(dict(p.payload or {}), float(p.score)) for p in result.points]


def meaning_search(client: QdrantClient, name: str, *, vector: list[float],
                   chunk_keys: list[str], using: str = SENTENCES) -> dict[str, float]:
    """Each listed point's best sentence (or lay question: ``using`` QUESTIONS) cosine with ``vector`` (points
    without such vectors are absent)."""
    if not chunk_keys:
        return {}
    result = client.query_points(name, query=[vector], using=using, limit=len(chunk_keys), with_payload=True,
                                 query_filter=models.Filter(must=[models.HasIdCondition(
                                     has_id=[point_id(k) for k in chunk_keys])]))
    return {str((p.payload or {}).get("chunk_key")): float(p.score) for p in result.points}


def sentence_search(client: QdrantClient, name: str, *, vector: list[float], act_keys: list[str],
                    limit: int, among: list[str] | None = None) -> list[tuple[dict[str, Any], float]]:
    """The ``limit`` articles (their first chunks) within the acts — and among the listed first chunks, if any —
    whose best sentence comes closest to ``vector``."""
    query_filter = _act_filter(act_keys)
    if among:
        ids = models.HasIdCondition(has_id=[point_id(k) for k in among])
        query_filter = models.Filter(must=[ids] if query_filter is None else [query_filter, ids])
    result = client.query_points(name, query=[vector], using=SENTENCES, query_filter=query_filter,
                                 limit=limit, with_payload=True)
    return [(dict(p.payload or {}), float(p.score)) for p in result.points]


def lexical_search(client: QdrantClient, name: str, *, sparse: Sparse, act_keys: list[str],
                   limit: int, using: str = LEXICAL) -> list[tuple[dict[str, Any], float]]:
    if not sparse.indices:
        return []
    result = client.query_points(name, query=models.SparseVector(indices=sparse.indices, values=sparse.values),
                                 using=using, query_filter=_act_filter(act_keys), limit=limit, with_payload=True)
    return [(dict(p.payload or {}), float(p.score)) for p in result.points]


def lexical_among(client: QdrantClient, name: str, *, sparse: Sparse,
                  chunk_keys: list[str]) -> list[tuple[dict[str, Any], float]]:
    """The listed chunks that share a word with the query, best BM25 first (keys of no point find nothing)."""
    if not sparse.indices or not chunk_keys:
        return []
    result = client.query_points(name, query=models.SparseVector(indices=sparse.indices, values=sparse.values),
                                 using=LEXICAL, limit=len(chunk_keys), with_payload=True,
                                 query_filter=models.Filter(must=[models.HasIdCondition(
                                     has_id=[point_id(k) for k in chunk_keys])]))
    return [(dict(p.payload or {}), float(p.score)) for p in result.points]


def article_chunks(client: QdrantClient, name: str, *, act_keys: list[str], article: str,
                   limit: int = 20) -> list[dict[str, Any]]:
    """The exact path: every chunk of the named article(s), no similarity involved."""
    must: list[models.Condition] = [models.FieldCondition(key="article", match=models.MatchValue(value=article))]
    if act_keys:
        must.append(models.FieldCondition(key="act_nreg_key", match=models.MatchAny(any=act_keys)))
    points, _ = client.scroll(name, scroll_filter=models.Filter(must=must), limit=limit, with_payload=True)
    return [dict(p.payload or {}) for p in points]


def delete_act(client: QdrantClient, name: str, act_key: str) -> None:
    if client.collection_exists(name):
        client.delete(name, points_selector=models.FilterSelector(filter=_act_filter([act_key])), wait=True)


def scan_records(client: QdrantClient, name: str, *, page: int = 2048) -> Iterator[models.Record]:
    """Every point with its id, payload and vectors, page by page (to build a search shard or index from)."""
    if not client.collection_exists(name):
        return
    offset: Any = None
    while True:
        points, offset = client.scroll(name, limit=page, offset=offset, with_payload=True, with_vectors=True)
        yield from points
        if offset is None:
            return


def scan(client: QdrantClient, name: str, *, page: int = 2048) -> Iterator[tuple[dict[str, Any], Any]]:
    """Every point's payload and vectors (for the in-process search index)."""
    for p in scan_records(client, name, page=page):
        yield dict(p.payload or {}), p.vector


def count(client: QdrantClient, name: str) -> int:
    if not client.collection_exists(name):
        return 0
    return int(client.count(name, exact=True).count)


# --- the defined-terms collection: one point per (article, defined term), payload = the defining chunk's ---------
def ensure_terms_collection(client: QdrantClient, name: str, *, payload_indexes: bool) -> None:
    if client.collection_exists(name):
        return
    client.create_collection(name, vectors_config={},
                             sparse_vectors_config={TERM: models.SparseVectorParams(modifier=models.Modifier.IDF)})
    if payload_indexes:
        for field in TERM_KEYWORD_FIELDS:
            client.create_payload_index(name, field, models.PayloadSchemaType.KEYWORD)


def upsert_terms(client: QdrantClient, name: str, points: list[tuple[str, Sparse, dict[str, Any]]]) -> None:
    """``(point key, term vector, payload)``; the key is deterministic, so re-ingestion overwrites."""
    if not points:
        return
    client.upsert(name, points=[
        models.PointStruct(id=point_id(key), payload=payload,
                           vector={TERM: models.SparseVector(indices=vec.indices, values=vec.values)})
        for key, vec, payload in points], wait=True)


def term_points(client: QdrantClient, name: str, *, key: str, act_keys: list[str],
                limit: int) -> list[dict[str, Any]]:
    """Every point whose term is exactly ``key`` (lemmas in order); the caller knows the collection exists."""
    must: list[models.Condition] = [models.FieldCondition(key="term_key", match=models.MatchValue(value=key))]
    if act_keys:
        must.append(models.FieldCondition(key="act_nreg_key", match=models.MatchAny(any=act_keys)))
    points, _ = client.scroll(name, scroll_filter=models.Filter(must=must), limit=limit, with_payload=True)
    return [dict(p.payload or {}) for p in points]
