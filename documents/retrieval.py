"""Searching a user's documents, in whichever engine holds them: a Qdrant server's collection (``QDRANT_URL``,
filtered by org and user, documents/index.py) or one Qdrant Edge shard per document (documents/shards.py). The
database decides which documents count either way: a hit of a deleted or unready document, or another user's,
never comes back."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings

from documents import index as docs_index
from documents import shards
from documents.models import UserDocument
from documents.selectors import newest_ready_documents, ready_documents
from knowledge.edge import search_backend
from knowledge.index import get_client
from knowledge.lexical import Sparse

logger = logging.getLogger(__name__)


def on_shards() -> bool:
    """The documents live in per-document shards unless the search engine is Qdrant itself (LLDBI_SEARCH)."""
    return search_backend() == "edge"


def _searched_documents(*, org_id: int, user_ref: str) -> dict[str, UserDocument]:
    """The user's newest DOCS_SEARCH_MAX_DOCUMENTS ready documents: each is a shard to open and ask, so a search
    costs in proportion (README "Users' documents in the embedded engine"); the rest is logged, not hidden."""
    cap = settings.DOCS_SEARCH_MAX_DOCUMENTS
    live = newest_ready_documents(org_id=org_id, user_ref=user_ref, limit=cap + 1)
    if len(live) > cap:
        logger.warning("the user has more ready documents than one search asks: the oldest are not searched",
                       extra={"org": org_id, "searched": cap})
        live = dict(list(live.items())[:cap])
    return live


def search_user_documents(*, org_id: int, user_ref: str, dense: list[float], sparse: Sparse, embed_model: str,
                          limit: int) -> list[tuple[dict[str, Any], float, UserDocument]]:
    """The user's best chunks, each with its document, by fusion of dense and BM25 (scored 0..1)."""
    if on_shards():
        live = _searched_documents(org_id=org_id, user_ref=user_ref)
        found = shards.search(list(live), dense=dense, sparse=sparse, embed_model=embed_model, limit=limit)
    else:
        found = docs_index.search(get_client(), settings.DOCS_COLLECTION, org_id=org_id, user_ref=user_ref,
                                  dense=dense, sparse=sparse, limit=limit)
        live = ready_documents(org_id=org_id, user_ref=user_ref,
                               ids=[str(p.get("document_id", "")) for p, _ in found])
    hits = []
    for payload, score in found:
        document = live.get(str(payload.get("document_id")))
        if document is not None:  # deleted (its points go later, on the worker) or not this user's
            hits.append((payload, score, document))
    return hits


def indexed_chunks(document_id: str) -> int:
    """How many chunks of the document the search engine holds (0: none, or deleted)."""
    if on_shards():
        return shards.point_count(document_id)
    return docs_index.count_for_document(get_client(), settings.DOCS_COLLECTION, document_id=document_id)
