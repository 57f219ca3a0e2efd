"""Reads of user documents. Every API path reaches a document through its org: another org's does not exist."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.db.models import QuerySet

from documents.models import UserDocument
from tenancy.models import Org
from tenancy.selectors import get_for_org_or_404


def document_list(*, org: Org, user_ref: str | None = None) -> QuerySet[UserDocument]:
    documents = UserDocument.objects.filter(org=org)
    return documents.filter(user_ref=user_ref) if user_ref is not None else documents


def document_get_for_org(*, org: Org, document_id: uuid.UUID | str) -> UserDocument:
    return get_for_org_or_404(UserDocument.objects.all(), org=org, pk=document_id, what="document")


def ready_documents(*, org_id: int, user_ref: str, ids: Iterable[str]) -> dict[str, UserDocument]:
    """The documents among ``ids`` that exist, are ready and belong to this org and user: the search index may
    still hold points of a deleted document (they are removed on the worker), the database decides."""
    wanted = [i for i in set(ids) if i]
    rows = UserDocument.objects.filter(pk__in=wanted, org_id=org_id, user_ref=user_ref,
                                       status=UserDocument.Status.READY)
    return {str(d.pk): d for d in rows}


def newest_ready_documents(*, org_id: int, user_ref: str, limit: int) -> dict[str, UserDocument]:
    """The user's ready documents, newest first, at most ``limit``: what the embedded engine searches (one shard
    each, documents/shards.py)."""
    rows = UserDocument.objects.filter(org_id=org_id, user_ref=user_ref,
                                       status=UserDocument.Status.READY).order_by("-created_at")[:limit]
    return {str(d.pk): d for d in rows}
