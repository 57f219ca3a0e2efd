"""Data lifecycle: old runs are purged, and an end user can be forgotten.

A purged run loses its RunContext (evidence, prompt, answer), its stage events, the copy of its turn stored as
conversation history, and its personal fields (question, user_ref, conversation_id, error); the Run row itself and
its cost-ledger rows are kept whole (billing is kept, not aggregated: the ledger PROTECTs its run).
``user_forget`` removes one end user's memory items, documents (rows, files, chunks and — on the retrieval worker —
vectors) and purges every run of theirs. ``org_delete`` does that for every user of an org, revokes its keys and
deletes it — unless it has billing rows, which keep the org, its runs (purged) and its ledger."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from documents.models import UserDocument
from documents.services import document_delete
from engine.channel_ports import history_key
from knowledge.snippets import SnippetStore
from lexery.errors import InputError
from llm.models import CostLedgerEntry
from memory.models import MemoryItem
from memory.services import memory_item_delete
from runs.models import Run, RunContext, StageEvent
from runs.services import clean_ref
from tenancy.models import ApiKey, Org

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
    user_ref = clean_ref(user_ref, name="user_ref", error=InputError, required_because="it names the user to forget")
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


@dataclass(frozen=True)
class OrgDeleted:
    memory_items: int
    documents: int
    runs: int
    keys_revoked: int
    deleted: bool  # False: billing rows keep the org row (its runs purged, its keys revoked)


def org_delete(*, org: Org, actor: str, store: SnippetStore | None = None) -> OrgDeleted:
    """Deleting an org row would leave its documents' files, chunks and vectors behind (issue 12): this removes
    every user's material through the same services first."""
    from tenancy.auth import api_key_revoke

    store = store or SnippetStore()
    items = list(MemoryItem.objects.filter(org=org))
    for item in items:
        memory_item_delete(item=item, store=store)
    documents = list(UserDocument.objects.filter(org=org))
    for document in documents:
        document_delete(document=document, store=store)
    runs = list(Run.objects.filter(org=org, purged_at__isnull=True))
    for run in runs:
        run_purge(run=run, store=store)
    revoked = sum(api_key_revoke(api_key=k, actor=actor, reason="org deleted")
                  for k in ApiKey.objects.filter(org=org, revoked_at__isnull=True).select_related("org"))
    billed = CostLedgerEntry.objects.filter(run__org=org).exists()
    if not billed:
        with transaction.atomic():
            Run.objects.filter(org=org).delete()
            org.delete()
    logger.info("org deleted", extra={"org": org.slug, "kept_for_billing": billed})
    return OrgDeleted(memory_items=len(items), documents=len(documents), runs=len(runs), keys_revoked=revoked,
                      deleted=not billed)
