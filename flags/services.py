"""Writes about flags. This module is the only place a flag value changes: every change checks the dedicated
permission and writes its audit entry in the same transaction, so there is no change without a trail."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction

from flags.models import CHANGE_PERMISSION, FeatureFlag, FlagAudit, FlagOverride
from flags.registry import KNOWN_FLAGS
from tenancy.models import Org, Specialist


def _require_permission(actor: Any) -> None:
    if not actor.has_perm(CHANGE_PERMISSION):
        raise PermissionDenied(f"{actor.get_username()!r} lacks the permission {CHANGE_PERMISSION!r}")


def flags_sync_registry() -> list[FeatureFlag]:
    """A row for every flag the code knows, with the code's default (idempotent; existing rows keep their value)."""
    return [FeatureFlag.objects.get_or_create(key=key, defaults={"default_enabled": default,
                                                                 "description": description})[0]
            for key, (default, description) in KNOWN_FLAGS.items()]


def flag_override_set(*, flag: FeatureFlag, enabled: bool | None, actor: Any, reason: str = "",
                      specialist: Specialist | None = None, org: Org | None = None) -> FlagAudit | None:
    """Set (``True``/``False``) or clear (``None``: inherit) the override of one org or one specialist.
    Returns the audit entry, or None when the value was already what was asked (nothing changes, nothing logged)."""
    if (specialist is None) == (org is None):
        raise ValueError("an override names exactly one scope: a specialist or an org")
    _require_permission(actor)
    scope_filter: dict[str, Any] = {"specialist": specialist} if specialist is not None else {"org": org}
    with transaction.atomic():
        FeatureFlag.objects.select_for_update().get(pk=flag.pk)  # serialises concurrent toggles of one flag
        current = FlagOverride.objects.filter(flag=flag, **scope_filter).first()
        before = current.enabled if current is not None else None
        if before == enabled:
            return None
        if enabled is None:
            assert current is not None
            current.delete()
        elif current is None:
            FlagOverride.objects.create(flag=flag, enabled=enabled, **scope_filter)
        else:
            current.enabled = enabled
            current.save(update_fields=["enabled", "updated_at"])
        if specialist is not None:
            scope, label = FlagAudit.Scope.SPECIALIST, f"specialist {specialist.org.slug}/{specialist.slug}"
        else:
            assert org is not None
            scope, label = FlagAudit.Scope.ORG, f"org {org.slug}"
        return FlagAudit.objects.create(actor=actor, actor_username=actor.get_username(), flag=flag,
                                        flag_key=flag.key, scope=scope, scope_label=label, org=org,
                                        specialist=specialist, before=before, after=enabled, reason=reason[:500])


def flag_overrides_set_for_specialists(*, flag: FeatureFlag, specialists: Iterable[Specialist],
                                       enabled: bool | None, actor: Any, reason: str = "") -> list[FlagAudit]:
    """The bulk action: one transaction for the whole selection, one audit entry per specialist that changed."""
    _require_permission(actor)
    with transaction.atomic():
        entries = [flag_override_set(flag=flag, specialist=sp, enabled=enabled, actor=actor, reason=reason)
                   for sp in specialists]
    return [e for e in entries if e is not None]


def flag_default_set(*, flag: FeatureFlag, enabled: bool, actor: Any, reason: str = "") -> FlagAudit | None:
    """Change the global default (what every org and specialist without an override gets)."""
    _require_permission(actor)
    with transaction.atomic():
        locked = FeatureFlag.objects.select_for_update().get(pk=flag.pk)
        before = locked.default_enabled
        if before == enabled:
            return None
        locked.default_enabled = enabled
        locked.save(update_fields=["default_enabled", "updated_at"])
        flag.default_enabled = enabled
        return FlagAudit.objects.create(actor=actor, actor_username=actor.get_username(), flag=locked,
                                        flag_key=locked.key, scope=FlagAudit.Scope.GLOBAL, scope_label="global",
                                        before=before, after=enabled, reason=reason[:500])
