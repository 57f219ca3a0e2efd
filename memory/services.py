"""Writes about memory items. The text goes to the snippet store too (U9 and U10 load evidence texts by key);
a failed store write leaves no row behind."""

from __future__ import annotations

import logging
import uuid

from django.conf import settings
from django.db import transaction

from knowledge.snippets import SnippetStore
from legaltext.text import has_visible_text, normalize
from lexery.errors import InputError, QuotaExceeded
from memory.models import MemoryItem
from runs.models import Run
from runs.services import check_text, clean_ref
from tenancy.models import Org

logger = logging.getLogger(__name__)


class MemoryInputError(InputError):
    """Bad input for a memory item; the message is a sentence for the client."""


def memory_key(*, org: Org, item_id: uuid.UUID) -> str:
    return f"memory/{org.pk}/{item_id}.txt"


def memory_item_create(*, org: Org, user_ref: str, text: str, source_run: Run | None = None,
                       store: SnippetStore | None = None) -> MemoryItem:
    user = clean_ref(user_ref, name="user_ref", error=MemoryInputError,
                     required_because="memory belongs to one end user of the org")
    cleaned = normalize(check_text(text or "", name="text", error=MemoryInputError))
    if not has_visible_text(cleaned):  # zero-width characters alone hold no fact to remember
        raise MemoryInputError("text must not be empty")
    if len(cleaned) > settings.MEMORY_ITEM_MAX_CHARS:
        raise MemoryInputError(f"text is {len(cleaned)} characters long; the limit is {settings.MEMORY_ITEM_MAX_CHARS}")
    if source_run is not None and source_run.org_id != org.pk:
        raise MemoryInputError("source_run belongs to another org")
    if MemoryItem.objects.filter(org=org).count() >= settings.ORG_MAX_MEMORY_ITEMS:
        raise QuotaExceeded(f"the org stores {settings.ORG_MAX_MEMORY_ITEMS} memory items, its limit "
                            "(ORG_MAX_MEMORY_ITEMS); delete some first")
    store = store or SnippetStore()
    item_id = uuid.uuid4()
    key = memory_key(org=org, item_id=item_id)
    with transaction.atomic():
        item = MemoryItem.objects.create(id=item_id, org=org, user_ref=user, text=cleaned, r2_key=key,
                                         source_run=source_run)
        store.put(key, cleaned)  # last: a failure here rolls the row back
    logger.info("memory item created", extra={"org": org.slug, "memory_item": str(item.pk)})
    return item


def memory_item_delete(*, item: MemoryItem, store: SnippetStore | None = None) -> None:
    store = store or SnippetStore()
    key, item_id = item.r2_key, str(item.pk)
    with transaction.atomic():
        item.delete()
        transaction.on_commit(lambda: store.storage.delete(key))
    logger.info("memory item deleted", extra={"memory_item": item_id})
