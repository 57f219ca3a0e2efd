"""Tasks for documents: a task fetches by id and calls the worker side (processing.py); the request side
(services.py) queues them through the ``enqueue_*`` functions here, each on its queue. Extraction runs on the
``assemble`` queue, indexing on the ``retrieval`` queue."""

from __future__ import annotations

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from kombu.exceptions import OperationalError as BrokerError

from documents.processing import (
    document_extract,
    document_extract_failed,
    document_index,
    document_index_failed,
    document_unindex,
)

RETRIEVAL_QUEUE = "retrieval"  # engine/specs.py: the workers that hold the embedder and search the documents
EXTRACT_QUEUE = "assemble"  # CPU work that needs no Qdrant: beside U9, off the web process


# The time limit is enforced by a prefork worker (Celery's solo pool cannot interrupt a task); the hard limit
# kills a child that ignores the soft one.
@shared_task(name="documents.extract", acks_late=True, reject_on_worker_lost=True, ignore_result=True,
             soft_time_limit=settings.DOCUMENT_EXTRACT_TIME_LIMIT_S,
             time_limit=settings.DOCUMENT_EXTRACT_TIME_LIMIT_S + 10)
def document_extract_task(document_id: str) -> None:
    try:
        document_extract(document_id=document_id, on_indexing=_enqueue_index_or_fail)
    except SoftTimeLimitExceeded:
        document_extract_failed(document_id=document_id, sentence=(
            f"reading the document took longer than {settings.DOCUMENT_EXTRACT_TIME_LIMIT_S} s "
            "(DOCUMENT_EXTRACT_TIME_LIMIT_S)"))
    except Exception:
        # A failure of ours (the stored file unreadable, a bug): the row must not wait in "extracting" for ever (no
        # reaper looks at documents); Celery logs the exception this re-raises.
        document_extract_failed(document_id=document_id,
                                sentence="reading the document failed on our side; upload it again")
        raise


@shared_task(name="documents.index", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def document_index_task(document_id: str) -> None:
    document_index(document_id=document_id)


@shared_task(name="documents.unindex", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def document_unindex_task(document_id: str) -> None:
    document_unindex(document_id=document_id)


def _enqueue_index_or_fail(document_id: str) -> None:
    """Queue the indexing of an extracted document. With the broker down the row would wait in "indexing" for ever
    (the extraction is done, so no redelivery of it queues the index again): it ends failed with a sentence."""
    try:
        enqueue_index(document_id)
    except BrokerError:
        document_index_failed(document_id=document_id, sentence=(
            "the document could not be queued for indexing (the task broker is unavailable); upload it again"))
        raise


def enqueue_extract(document_id: str) -> None:
    document_extract_task.apply_async(args=[document_id], queue=EXTRACT_QUEUE)


def enqueue_index(document_id: str) -> None:
    document_index_task.apply_async(args=[document_id], queue=RETRIEVAL_QUEUE)


def enqueue_unindex(document_id: str) -> None:
    document_unindex_task.apply_async(args=[document_id], queue=RETRIEVAL_QUEUE)
