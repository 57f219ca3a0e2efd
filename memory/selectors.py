"""Reads of memory items. Every API path reaches an item through its org: another org's item does not exist."""

from __future__ import annotations

import uuid

from django.db.models import QuerySet

from memory.models import MemoryItem
from tenancy.models import Org
from tenancy.selectors import get_for_org_or_404


def memory_item_list(*, org: Org, user_ref: str | None = None) -> QuerySet[MemoryItem]:
    items = MemoryItem.objects.filter(org=org)
    return items.filter(user_ref=user_ref) if user_ref is not None else items


def memory_item_get_for_org(*, org: Org, item_id: uuid.UUID | str) -> MemoryItem:
    return get_for_org_or_404(MemoryItem.objects.all(), org=org, pk=item_id, what="memory item")


def memory_texts_for_user(*, org_id: int, user_ref: str, limit: int) -> list[tuple[str, str, str]]:
    """(id, text, r2_key) of a user's newest ``limit`` items: what U7's memory port matches against."""
    rows = (MemoryItem.objects.filter(org_id=org_id, user_ref=user_ref)
            .order_by("-created_at").values_list("id", "text", "r2_key")[:limit])
    return [(str(i), t, k) for i, t, k in rows]
