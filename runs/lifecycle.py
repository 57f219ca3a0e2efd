"""Data lifecycle: old runs are purged, and an end user can be forgotten.

A purged run loses its RunContext (evidence, prompt, answer), its stage events, the copy of its turn stored as
conversation history, and its personal fields (question, user_ref, conversation_id, error); the Run row itself and
its cost-ledger rows are kept whole (billing is kept, not aggregated: the ledger PROTECTs its run).
``user_forget`` removes one end user's memory items, documents (rows, files, chunks and — on the retrieval worker —
vectors) and purges every run of theirs."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from documents.models import UserDocument
from documents.services import document_delete
from knowledge.snippets import SnippetStore
from memory.models import MemoryItem
from memory.services import memory_item_delete
from orch.channel_ports import history_key
from runs.models import Org, Run, RunContext, StageEvent

logger = logging.getLogger(__name__)


def run_purge(*, run: Run, store: SnippetStore | None = None) -> None:
    store = store or SnippetStore()
    key = history_key(org_id=run.org_id, run_id=str(run.pk))
    with transaction.atomic():
        RunContext.objects.filter(run=run).delete()
        StageEvent.objects.filter(run=run).delete()
        Run.objects.filter(pk=run.pk).update(question="", user_ref="", conversation_id="", error="",
                                             purged_at=timezone.now())

        def drop_history() -> None:
            try:
                store.storage.delete(key)
            except Exception:  # best effort; a leftover copy is logged (the storage may not have it at all)
                logger.warning("history copy not deleted", extra={"key": key})

        transaction.on_commit(drop_history)


def runs_purge(*, older_than_days: int, store: SnippetStore | None = None) -> int:
    """Purge every finished run created more than ``older_than_days`` days ago; returns how many."""
    if older_than_days < 1:
        raise ValueError("older_than_days must be at least 1")
    cutoff = timezone.now() - timedelta(days=older_than_days)
    runs = Run.objects.filter(created_at__lt=cutoff, status__in=Run.TERMINAL, purged_at__isnull=True)
    count = 0
    for run in runs.iterator():
        run_purge(run=run, store=store)
        count += 1
    logger.info("runs purged", extra={"count": count, "older_than_days": older_than_days})
    return count


@dataclass(frozen=True)
class Forgotten:
    memory_items: int
    documents: int
    runs: int


def user_forget(*, org: Org, user_ref: str, store: SnippetStore | None = None) -> Forgotten:
    store = store or SnippetStore()
    items = list(MemoryItem.objects.filter(org=org, user_ref=user_ref))
    for item in items:
        memory_item_delete(item=item, store=store)
    documents = list(UserDocument.objects.filter(org=org, user_ref=user_ref))
    for document in documents:
        document_delete(document=document, store=store)
    runs = list(Run.objects.filter(org=org, user_ref=user_ref))
    for run in runs:
        run_purge(run=run, store=store)
    logger.info("end user forgotten", extra={"org": org.slug, "memory_items": len(items),
                                             "documents": len(documents), "runs": len(runs)})
    return Forgotten(memory_items=len(items), documents=len(documents), runs=len(runs))
