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

from documents.extract import ExtractionError, check_zip, document_kind
from documents.models import UserDocument
from documents.processing import DocumentInputError, chunk_key, delete_keys, document_prefix, limits
from documents.tasks import enqueue_extract, enqueue_unindex
from knowledge.snippets import SnippetStore
from lexery.errors import QuotaExceeded
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
            transaction.on_commit(lambda: enqueue_extract(str(doc_id)))
    except Exception:
        delete_keys(store, written)  # the row rolled back; the stored file must go too
        raise
    logger.info("document stored", extra={"org": org.slug, "document": str(doc_id), "kind": kind,
                                          "bytes": len(data)})
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
        transaction.on_commit(lambda: delete_keys(store, keys))
        transaction.on_commit(lambda: enqueue_unindex(doc_id))
    logger.info("document deleted", extra={"document": doc_id})


