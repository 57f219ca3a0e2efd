"""Writes about user documents, on the request side (the workers' side is processing.py).

``document_create`` does in the request only what is cheap and can refuse the upload — name, type, size, the
org's quota, a DOCX's zip directory — then stores the file and creates the row (``extracting``): a refused upload
leaves no row and no stored file. Text extraction and chunking run on a worker (``documents.extract``, bounded by
``DOCUMENT_EXTRACT_TIME_LIMIT_S``; a file that yields no text ends ``failed`` with a sentence), never in the web
process (issue 12). Embedding and indexing happen on a retrieval worker (``documents.index``: the document's own
search shard, or the Qdrant server's collection); the row says ``indexing`` until then, ``ready`` or ``failed``
after."""

from __future__ import annotations

import logging
import uuid
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerError

from documents.extract import ExtractionError, check_zip, document_kind
from documents.models import UserDocument
from documents.processing import (
    DocumentInputError,
    chunk_key,
    delete_keys,
    document_prefix,
    document_unindex,
    limits,
)
from documents.tasks import enqueue_extract, enqueue_unindex
from knowledge.snippets import SnippetStore
from lexery.errors import QuotaExceeded, Unavailable
from runs.services import clean_ref
from tenancy.models import Org

logger = logging.getLogger(__name__)


def _clean_filename(filename: str) -> str:
    name = PurePosixPath((filename or "").replace("\\", "/")).name.strip()
    if not name:
        raise DocumentInputError("the file has no name")
    return name[-255:]


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
            check_zip(data, limits())
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
            transaction.on_commit(lambda: _queue_extract(document))
    except Exception:
        delete_keys(store, written)  # the row rolled back (or _queue_extract deleted it); the stored file goes too
        raise
    logger.info("document stored", extra={"org": org.slug, "document": str(doc_id), "kind": kind,
                                          "bytes": len(data)})
    return document


def _queue_extract(document: UserDocument) -> None:
    """Queue the extraction once the row is committed. With the broker down the row would wait in ``extracting``
    for ever (no reaper looks at documents) behind a 500 (fault injection, issue 12): the upload is undone instead
    and refused with a 503 that says to send it again."""
    try:
        enqueue_extract(str(document.pk))
    except BrokerError as exc:
        logger.warning("document not queued: the broker is unavailable", extra={"document": str(document.pk)})
        document.delete()
        raise Unavailable("the document could not be queued for reading (the task broker is unavailable); nothing "
                          "was stored: upload it again") from exc


def _unindex(document_id: str) -> None:
    """Remove the points on a retrieval worker; with the broker down, here (a shard is a folder, a Qdrant server a
    call): the row and the files are already gone, so the delete stands, and nothing of the document stays behind."""
    try:
        enqueue_unindex(document_id)
    except BrokerError:
        logger.warning("document unindex not queued: the broker is unavailable; removing its points in the request",
                       extra={"document": document_id})
        document_unindex(document_id=document_id)


def document_delete(*, document: UserDocument, store: SnippetStore | None = None) -> None:
    """The row and the stored files go now; the points go on the retrieval worker. Until then the docs port
    sees no row for them and drops them, so a deleted document never reaches a run."""
    store = store or SnippetStore()
    doc_id = str(document.pk)
    keys = [document.storage_key, *(chunk_key(org_id=document.org_id, document_id=doc_id, ordinal=i)
                                    for i in range(document.n_chunks))]
    with transaction.atomic():
        document.delete()
        transaction.on_commit(lambda: delete_keys(store, keys))
        transaction.on_commit(lambda: _unindex(doc_id))
    logger.info("document deleted", extra={"document": doc_id})


