"""What the workers do with an upload after the request has stored it: extract and chunk its text (the
``assemble`` queue), embed and index its chunks, remove its points (the ``retrieval`` queue, whose workers keep the
embedder loaded). documents/tasks.py fetches by id and calls these; the request side is services.py."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

from django.conf import settings
from django.db import transaction

from documents import index as docs_index
from documents import shards
from documents.extract import ExtractionError, ExtractLimits, extract_text
from documents.models import UserDocument
from documents.retrieval import on_shards
from knowledge.embeddings import Embedder, default_embedder
from knowledge.index import get_client
from knowledge.lexical import document_vector
from knowledge.snippets import SnippetStore
from legaltext.chunking import split_text
from lexery.errors import InputError

logger = logging.getLogger(__name__)


class DocumentInputError(InputError):
    """A refused upload; the message is a sentence for the client."""


def document_prefix(*, org_id: int, document_id: uuid.UUID | str) -> str:
    return f"docs/{org_id}/{document_id}"


def chunk_key(*, org_id: int, document_id: uuid.UUID | str, ordinal: int) -> str:
    """``docs/<org>/<document>/c0.txt``: deterministic, so U9 and U10 load a chunk like a law snippet."""
    return f"{document_prefix(org_id=org_id, document_id=document_id)}/c{ordinal}.txt"


def limits() -> ExtractLimits:
    return ExtractLimits(max_uncompressed_bytes=settings.DOCUMENT_MAX_UNCOMPRESSED_BYTES,
                         max_zip_ratio=settings.DOCUMENT_MAX_ZIP_RATIO, max_pdf_pages=settings.DOCUMENT_MAX_PDF_PAGES,
                         max_seconds=settings.DOCUMENT_EXTRACT_TIME_LIMIT_S,
                         # each chunk holds at most CHUNK_MAX_CHARS: a longer text makes too many chunks
                         max_chars=settings.DOCUMENT_MAX_CHUNKS * settings.CHUNK_MAX_CHARS)


def _chunks(data: bytes, *, filename: str, kind: str) -> tuple[list[str], int]:
    try:
        text = extract_text(data, kind, limits())
    except ExtractionError as exc:
        raise DocumentInputError(f"{filename}: {exc}") from exc
    chunks = [c for c in split_text(text, max_chars=settings.CHUNK_MAX_CHARS,
                                    overlap_chars=settings.CHUNK_OVERLAP_CHARS) if c.strip()]
    if not chunks:
        raise DocumentInputError(f"{filename}: no text could be extracted (a scanned PDF needs OCR first)")
    if len(chunks) > settings.DOCUMENT_MAX_CHUNKS:
        raise DocumentInputError(f"{filename}: the text makes {len(chunks)} chunks; the limit is "
                                 f"{settings.DOCUMENT_MAX_CHUNKS} (DOCUMENT_MAX_CHUNKS)")
    return chunks, sum(len(c) for c in chunks)


def document_extract(*, document_id: str, on_indexing: Callable[[str], None], store: SnippetStore | None = None
                     ) -> UserDocument | None:
    """Text out of a stored upload, chunked into the snippet store; then ``indexing``, and once that commits
    ``on_indexing`` queues the index task (the caller's: this module queues nothing, tasks.py calls it). A refusal
    ends the row ``failed`` with the sentence and drops the stored file. Idempotent: a row no longer
    ``extracting`` is left alone."""
    document = UserDocument.objects.filter(pk=document_id).first()
    if document is None or document.status != UserDocument.Status.EXTRACTING:
        return document
    store = store or SnippetStore()
    try:
        with store.storage.open(document.storage_key, "rb") as fh:
            data = fh.read()
        chunks, n_chars = _chunks(data, filename=document.filename, kind=document.kind)
    except DocumentInputError as exc:
        return document_extract_failed(document_id=document_id, sentence=str(exc), store=store)
    for i, text in enumerate(chunks):
        store.put(chunk_key(org_id=document.org_id, document_id=document.pk, ordinal=i), text)
    with transaction.atomic():
        updated = UserDocument.objects.filter(pk=document.pk, status=UserDocument.Status.EXTRACTING).update(
            status=UserDocument.Status.INDEXING, n_chunks=len(chunks), n_chars=n_chars)
        if updated:
            transaction.on_commit(lambda: on_indexing(str(document_id)))
    logger.info("document extracted", extra={"document": document_id, "chunks": len(chunks)})
    document.refresh_from_db()
    return document


def document_extract_failed(*, document_id: str, sentence: str, store: SnippetStore | None = None
                            ) -> UserDocument | None:
    """End an extraction with a sentence for the client; the stored original goes (it will never be used)."""
    store = store or SnippetStore()
    document = UserDocument.objects.filter(pk=document_id, status=UserDocument.Status.EXTRACTING).first()
    if document is None:
        return UserDocument.objects.filter(pk=document_id).first()
    UserDocument.objects.filter(pk=document.pk).update(status=UserDocument.Status.FAILED, error=sentence[:1000])
    delete_keys(store, [document.storage_key])
    logger.info("document extraction failed", extra={"document": document_id, "why": sentence[:200]})
    document.refresh_from_db()
    return document


def document_index_failed(*, document_id: str, sentence: str) -> None:
    """End a document still waiting to be indexed with a sentence for the client (its chunks stay until delete)."""
    UserDocument.objects.filter(pk=document_id, status=UserDocument.Status.INDEXING).update(
        status=UserDocument.Status.FAILED, error=sentence[:1000])


def delete_keys(store: SnippetStore, keys: list[str]) -> None:
    for key in keys:
        try:
            store.storage.delete(key)
        except Exception:  # best effort: a leftover file is logged, never a reason to fail the cleanup of the rest
            logger.warning("stored file not deleted", extra={"key": key})


def document_index(*, document_id: str, embedder: Embedder | None = None, store: SnippetStore | None = None
                   ) -> UserDocument | None:
    """Embed and upsert a stored document's chunks. Idempotent: point ids are deterministic, and a document
    that is no longer ``indexing`` (done, failed, deleted) is left alone."""
    document = UserDocument.objects.filter(pk=document_id).first()
    if document is None or document.status != UserDocument.Status.INDEXING:
        return document
    store = store or SnippetStore()
    try:
        embedder = embedder or default_embedder()
        points = _document_points(document, embedder, store)
        _store_points(str(document.pk), points, embedder)
    except Exception as exc:
        logger.exception("document indexing failed", extra={"document": str(document.pk)})
        # the client reads ``error``: our sentence, never the exception (it is in the log above)
        UserDocument.objects.filter(pk=document.pk).update(
            status=UserDocument.Status.FAILED, error=f"indexing failed ({type(exc).__name__}); upload it again")
        document.refresh_from_db()
        return document
    updated = UserDocument.objects.filter(pk=document.pk, status=UserDocument.Status.INDEXING).update(
        status=UserDocument.Status.READY)
    if not updated and not UserDocument.objects.filter(pk=document.pk).exists():
        # deleted while it was embedded: its delete task may have run before these points existed
        document_unindex(document_id=str(document.pk))
        return None
    logger.info("document indexed", extra={"document": str(document.pk), "chunks": len(points)})
    document.refresh_from_db()
    return document


def _document_points(document: UserDocument, embedder: Embedder, store: SnippetStore) -> list[docs_index.DocPoint]:
    keys = [chunk_key(org_id=document.org_id, document_id=document.pk, ordinal=i) for i in range(document.n_chunks)]
    texts = [store.get(k) for k in keys]
    dense = embedder.embed(texts)
    return [docs_index.DocPoint(
        chunk_key=f"doc#{document.pk}#c{i}", dense=dense[i].tolist(), sparse=document_vector(text),
        payload={"org_id": document.org_id, "user_ref": document.user_ref, "document_id": str(document.pk),
                 "filename": document.filename, "ordinal": i, "r2_key": keys[i], "chars": len(text)})
        for i, text in enumerate(texts)]


def rebuild_document_shards(*, embedder: Embedder | None = None, store: SnippetStore | None = None) -> int:
    """Rebuild the shard of every ready document that has none, or one written by another qdrant-edge version or
    embedding model (after an upgrade: ``build_search_shards``), from its stored chunks. Returns how many."""
    embedder = embedder or default_embedder()
    store = store or SnippetStore()
    rebuilt = 0
    for document in UserDocument.objects.filter(status=UserDocument.Status.READY).iterator():
        if shards.is_current(str(document.pk), embed_model=embedder.name):
            continue
        shards.build(str(document.pk), _document_points(document, embedder, store), embed_model=embedder.name,
                     dim=embedder.dim, replace=True)
        rebuilt += 1
    return rebuilt


def _store_points(document_id: str, points: list[docs_index.DocPoint], embedder: Embedder) -> None:
    """Into the document's own shard (built once, then read by any process), or the server's collection."""
    if on_shards():
        shards.build(document_id, points, embed_model=embedder.name, dim=embedder.dim)
        return
    client = get_client()
    docs_index.ensure_collection(client, settings.DOCS_COLLECTION, embedder.dim,
                                 payload_indexes=bool(settings.QDRANT_URL))
    docs_index.upsert(client, settings.DOCS_COLLECTION, points)


def document_unindex(*, document_id: str) -> None:
    if on_shards():
        shards.remove(document_id)
    else:
        docs_index.delete_document(get_client(), settings.DOCS_COLLECTION, document_id=document_id)
