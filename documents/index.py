"""The users' documents in a Qdrant collection (``DOCS_COLLECTION``): one point per chunk with a dense and a BM25
vector, every search filtered by org and user. The distributed path (``QDRANT_URL``: any number of workers share the
server) and, with ``LLDBI_SEARCH=qdrant`` and no server, qdrant-client's local mode; without a server the documents
are otherwise in one Qdrant Edge shard each (documents/shards.py). documents/retrieval.py picks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from knowledge.index import DENSE, LEXICAL, CollectionMismatch, point_id
from knowledge.lexical import Sparse

if TYPE_CHECKING:
    from qdrant_client import QdrantClient, models
else:
    from knowledge.qdrant_models import models  # imported when first used: see there

RRF_K = 60  # the usual reciprocal-rank constant: ranks matter, raw scores of unlike signals do not


@dataclass(frozen=True)
class DocPoint:
    chunk_key: str  # "doc#<document id>#c<ordinal>": the point id derives from it
    dense: list[float]
    sparse: Sparse
    payload: dict[str, Any]


def ensure_collection(client: QdrantClient, name: str, dim: int, *, payload_indexes: bool) -> None:
    if client.collection_exists(name):
        vectors = client.get_collection(name).config.params.vectors
        have = vectors.get(DENSE) if isinstance(vectors, dict) else None
        if have is not None and have.size != dim:
            raise CollectionMismatch(f"collection {name!r} holds {have.size}-d vectors but the embedding model "
                                     f"gives {dim}-d: use another DOCS_COLLECTION per EMBEDDING_MODEL")
        return
    client.create_collection(
        name,
        vectors_config={DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE)},
        sparse_vectors_config={LEXICAL: models.SparseVectorParams(modifier=models.Modifier.IDF)},
    )
    if payload_indexes:  # a Qdrant server filters faster with them; the local mode ignores them
        client.create_payload_index(name, "org_id", models.PayloadSchemaType.INTEGER)
        for field in ("user_ref", "document_id"):
            client.create_payload_index(name, field, models.PayloadSchemaType.KEYWORD)


def upsert(client: QdrantClient, name: str, points: list[DocPoint]) -> None:
    client.upsert(name, wait=True, points=[
        models.PointStruct(id=point_id(p.chunk_key), payload=p.payload, vector={
            DENSE: p.dense, LEXICAL: models.SparseVector(indices=p.sparse.indices, values=p.sparse.values)})
        for p in points])


def _owner(org_id: int, user_ref: str) -> models.Filter:
    return models.Filter(must=[models.FieldCondition(key="org_id", match=models.MatchValue(value=org_id)),
                               models.FieldCondition(key="user_ref", match=models.MatchValue(value=user_ref))])


def search(client: QdrantClient, name: str, *, org_id: int, user_ref: str, dense: list[float], sparse: Sparse,
           limit: int) -> list[tuple[dict[str, Any], float]]:
    """The user's best chunks by reciprocal-rank fusion of dense and BM25, scored 0..1 (1: first in both)."""
    if not client.collection_exists(name):
        return []
    owner = _owner(org_id, user_ref)
    lists = [client.query_points(name, query=dense, using=DENSE, query_filter=owner, limit=limit,
                                 with_payload=True).points]
    if sparse.indices:
        lists.append(client.query_points(name, query=models.SparseVector(indices=sparse.indices,
                                                                         values=sparse.values),
                                         using=LEXICAL, query_filter=owner, limit=limit, with_payload=True).points)
    return fuse([[(str(p.id), dict(p.payload or {})) for p in points] for points in lists], limit)


def fuse(lists: Sequence[Sequence[tuple[str, dict[str, Any]]]], limit: int) -> list[tuple[dict[str, Any], float]]:
    """Reciprocal-rank fusion of ranked ``(point id, payload)`` lists (the server's and the shards' search alike),
    scored relative to a point first in two lists."""
    fused: dict[str, tuple[dict[str, Any], float]] = {}
    for ranked in lists:
        for rank, (pid, payload) in enumerate(ranked, start=1):
            have, score = fused.get(pid, (payload, 0.0))
            fused[pid] = (have, score + 1.0 / (RRF_K + rank))
    best = 2.0 / (RRF_K + 1)
    ranked_all = sorted(fused.values(), key=lambda ps: ps[1], reverse=True)[:limit]
    return [(payload, round(score / best, 6)) for payload, score in ranked_all]


def delete_document(client: QdrantClient, name: str, *, document_id: str) -> None:
    if not client.collection_exists(name):
        return
    client.delete(name, wait=True, points_selector=models.FilterSelector(filter=models.Filter(must=[
        models.FieldCondition(key="document_id", match=models.MatchValue(value=document_id))])))


def count_for_document(client: QdrantClient, name: str, *, document_id: str) -> int:
    if not client.collection_exists(name):
        return 0
    flt = models.Filter(must=[models.FieldCondition(key="document_id", match=models.MatchValue(value=document_id))])
    return int(client.count(name, count_filter=flt, exact=True).count)
