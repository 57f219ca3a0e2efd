"""Tasks of the retrieval queue for documents: a task fetches by id and calls a service."""

from __future__ import annotations

from celery import shared_task

from documents.services import document_index, document_unindex


@shared_task(name="documents.index", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def document_index_task(document_id: str) -> None:
    document_index(document_id=document_id)


@shared_task(name="documents.unindex", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def document_unindex_task(document_id: str) -> None:
    document_unindex(document_id=document_id)
