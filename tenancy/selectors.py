"""Org-scoped reads by id, shared by the API's selectors: another org's object, or an id that is not a UUID, is
a 404 — the same answer as a missing one, so ids leak nothing across orgs."""

from __future__ import annotations

import uuid
from typing import TypeVar

from django.db.models import Model, QuerySet

from lexery.errors import NotFound
from tenancy.models import Org

M = TypeVar("M", bound=Model)


def get_for_org_or_404(queryset: QuerySet[M], *, org: Org, pk: uuid.UUID | str, what: str) -> M:
    """The object of ``queryset`` with this id that belongs to ``org`` (the model has an ``org`` foreign key)."""
    try:
        key = pk if isinstance(pk, uuid.UUID) else uuid.UUID(str(pk))
    except ValueError as exc:
        raise NotFound(f"{what} not found") from exc
    found = queryset.filter(pk=key, org=org).first()
    if found is None:
        raise NotFound(f"{what} not found")
    return found
