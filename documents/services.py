"""Writes about user documents.

``document_create`` does in the request only what is cheap and can refuse the upload — name, type, size, the
org's quota, a DOCX's zip directory — then stores the file and creates the row (``extracting``): a refused upload
leaves no row and no stored file. Text extraction and chunking run on a worker (``documents.extract``, bounded by
``DOCUMENT_EXTRACT_TIME_LIMIT_S``; a file that yields no text ends ``failed`` with a sentence), never in the web
process (issue 12). Embedding and upserting happen on the retrieval worker (``documents.index``), the only process
that opens a local-path Qdrant; the row says ``indexing`` until then, ``ready`` or ``failed`` after."""

from __future__ import annotations

import logging
import uuid
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction

from documents import index as docs_index
from documents.extract import ExtractionError, ExtractLimits, check_zip, document_kind, extract_text
from documents.models import UserDocument
from knowledge.chunking import split_text
from knowledge.embeddings import Embedder, default_embedder
from knowledge.index import get_client
from knowledge.lexical import document_vector
from knowledge.snippets import SnippetStore
from lexery.errors import InputError, QuotaExceeded
from runs.services import clean_ref
from tenancy.models import Org

logger = logging.getLogger(__name__)
RETRIEVAL_QUEUE = "retrieval"  # engine/dispatch.py: the queue of the one process that opens Qdrant
EXTRACT_QUEUE = "assemble"  # CPU work that needs no Qdrant: beside U9, off the web process


class DocumentInputError(InputError):
    """A refused upload; the message is a sentence for the client."""


def document_prefix(*, org_id: int, document_id: uuid.UUID | str) -> str:
    return f"docs/{org_id}/{document_id}"


def chunk_key(*, org_id: int, document_id: uuid.UUID | str, ordinal: int) -> str:
    """``docs/<org>/<document>/c0.txt``: deterministic, so U9 and U10 load a chunk like a law snippet."""
    return f"{document_prefix(org_id=org_id, document_id=document_id)}/c{ordinal}.txt"


def _clean_filename(filename: str) -> str:
    name = PurePosixPath((filename or "").replace("\\", "/")).name.strip()
    if not name:
        raise DocumentInputError("the file has no name")
    return name[-255:]


def _limits() -> ExtractLimits:
    return ExtractLimits(max_uncompressed_bytes=settings.DOCUMENT_MAX_UNCOMPRESSED_BYTES,
                         max_zip_ratio=settings.DOCUMENT_MAX_ZIP_RATIO, max_pdf_pages=settings.DOCUMENT_MAX_PDF_PAGES)


def _chunks(data: bytes, *, filename: str, kind: str) -> tuple[list[str], int]:
    try:
        text = extract_text(data, kind, _limits())
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


def document_create(*, org: Org, user_ref: str, filename: str, content_type: str, data: bytes,
                    store: SnippetStore | None = None) -> UserDocument:
    user = clean_ref(user_ref, name="user_ref", error=DocumentInputError,
                     required_because="a document belongs to one end user of the org")
    name = _clean_filename(filename)
    if UserDocument.objects.filter(org=org).count() >= settings.ORG_MAX_DOCUMENTS:
        raise QuotaExceeded(f"the org stores {settings.ORG_MAX_DOCUMENTS} documents, its limit (ORG_MAX_DOCUMENTS); "
                            "delete some first")
    if not data:
        raise DocumentInputError(f"{name}: the file is empty")
    if len(data) > settings.DOCUMENT_MAX_BYTES:
        raise DocumentInputError(f"{name}: the file is {len(data)} bytes; the limit is {settings.DOCUMENT_MAX_BYTES}"
                                 " (DOCUMENT_MAX_BYTES)")
    try:
        kind = document_kind(name, content_type)
        if kind == "docx":  # the zip directory alone: a bomb is refused before anything is stored or inflated
            check_zip(data, _limits())
    except ExtractionError as exc:
        raise DocumentInputError(f"{name}: {exc}") from exc
    store = store or SnippetStore()
    doc_id = uuid.uuid4()
    written: list[str] = []
    try:
        with transaction.atomic():
            original = store.storage.save(f"{document_prefix(org_id=org.pk, document_id=doc_id)}/original.{kind}",
                                          ContentFile(data))
            written.append(original)
            document = UserDocument.objects.create(
                id=doc_id, org=org, user_ref=user, filename=name, content_type=(content_type or "")[:100],
                kind=kind, size=len(data), storage_key=original, status=UserDocument.Status.EXTRACTING)
            transaction.on_commit(lambda: _enqueue_extract(str(doc_id)))
    except Exception:
        _delete_keys(store, written)  # the row rolled back; the stored file must go too
        raise
    logger.info("document stored", extra={"org": org.slug, "document": str(doc_id), "kind": kind,
                                          "bytes": len(data)})
    return document


def document_extract(*, document_id: str, store: SnippetStore | None = None) -> UserDocument | None:
    """Text out of a stored upload, chunked into the snippet store; then ``indexing`` (the index task is queued).
    A refusal ends the row ``failed`` with the sentence and drops the stored file. Idempotent: a row no longer
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
            transaction.on_commit(lambda: _enqueue_index(str(document_id)))
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
    _delete_keys(store, [document.storage_key])
    logger.info("document extraction failed", extra={"document": document_id, "why": sentence[:200]})
    document.refresh_from_db()
    return document


def _enqueue_extract(document_id: str) -> None:
    from documents.tasks import document_extract_task

    document_extract_task.apply_async(args=[document_id], queue=EXTRACT_QUEUE)


def _enqueue_index(document_id: str) -> None:
    from documents.tasks import document_index_task

    document_index_task.apply_async(args=[document_id], queue=RETRIEVAL_QUEUE)


def _delete_keys(store: SnippetStore, keys: list[str]) -> None:
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
        keys = [chunk_key(org_id=document.org_id, document_id=document.pk, ordinal=i)
                for i in range(document.n_chunks)]
        texts = [store.get(k) for k in keys]
        embedder = embedder or default_embedder()
        client = get_client()
        docs_index.ensure_collection(client, settings.DOCS_COLLECTION, embedder.dim,
                                     payload_indexes=bool(settings.QDRANT_URL))
        dense = embedder.embed(texts)
        points = [docs_index.DocPoint(
            chunk_key=f"doc#{document.pk}#c{i}", dense=dense[i].tolist(), sparse=document_vector(text),
            payload={"org_id": document.org_id, "user_ref": document.user_ref, "document_id": str(document.pk),
                     "filename": document.filename, "ordinal": i, "r2_key": keys[i], "chars": len(text)})
            for i, text in enumerate(texts)]
        docs_index.upsert(client, settings.DOCS_COLLECTION, points)
    except Exception as exc:
        logger.exception("document indexing failed", extra={"document": str(document.pk)})
        # the client reads ``error``: our sentence, never the exception (it is in the log above)
        UserDocument.objects.filter(pk=document.pk).update(
            status=UserDocument.Status.FAILED, error=f"indexing failed ({type(exc).__name__}); upload it again")
        document.refresh_from_db()
        return document
    UserDocument.objects.filter(pk=document.pk, status=UserDocument.Status.INDEXING).update(
        status=UserDocument.Status.READY)
    logger.info("document indexed", extra={"document": str(document.pk), "chunks": len(points)})
    document.refresh_from_db()
    return document


def document_delete(*, document: UserDocument, store: SnippetStore | None = None) -> None:
    """The row and the stored files go now; the points go on the retrieval worker. Until then the docs port
    sees no row for them and drops them, so a deleted document never reaches a run."""
    store = store or SnippetStore()
    doc_id = str(document.pk)
    keys = [document.storage_key, *(chunk_key(org_id=document.org_id, document_id=doc_id, ordinal=i)
                                    for i in range(document.n_chunks))]
    with transaction.atomic():
        document.delete()
        transaction.on_commit(lambda: _delete_keys(store, keys))
        transaction.on_commit(lambda: _enqueue_unindex(doc_id))
    logger.info("document deleted", extra={"document": doc_id})


def _enqueue_unindex(document_id: str) -> None:
    from documents.tasks import document_unindex_task

    document_unindex_task.apply_async(args=[document_id], queue=RETRIEVAL_QUEUE)


def document_unindex(*, document_id: str) -> None:
    docs_index.delete_document(get_client(), settings.DOCS_COLLECTION, document_id=document_id)
