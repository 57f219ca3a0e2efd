"""Orgs, specialists, API keys and the key audit in the operators' console.

``OrgAdmin`` is a base, registered by ``runs/admin.py``: deleting an org goes only through ``runs.lifecycle.org_delete``
(its users' documents, memory and runs go first), and tenancy sits below the apps that hold that data."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from lexery.admin_records import ReadOnlyAdmin
from tenancy.auth import api_key_issue, api_key_revoke
from tenancy.models import ApiKey, ApiKeyAudit, Specialist


def actor_of(request: HttpRequest) -> str:
    """Who did it, for the audit trails: the console user's name."""
    return f"admin:{request.user.get_username()}"


class OrgAdmin(admin.ModelAdmin):
    """An org is deleted only through ``org_delete``: the plain delete is off."""

    list_display = ("slug", "name", "created_at")
    search_fields = ("slug", "name")

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Specialist)
class SpecialistAdmin(admin.ModelAdmin):
    list_display = ("slug", "org", "name", "flags_link", "created_at")
    list_filter = ("org",)
    search_fields = ("slug", "name")

    @admin.display(description="flags")
    def flags_link(self, obj: Specialist) -> SafeString:
        url = reverse("admin:flags_specialistflags_changelist") + f"?q={obj.slug}"
        return format_html('<a href="{}">flags</a>', url)


class SpecialistListFilter(admin.RelatedFieldListFilter):
    """The specialist choices with their orgs in one query (a specialist's name includes its org)."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        return [(str(s.pk), str(s)) for s in Specialist.objects.select_related("org").order_by("org__slug", "slug")]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Adding a key issues one through ``api_key_issue`` and shows it once, in the message after saving; it is never
    shown again (only its digest is stored). A key is revoked, not deleted: the audit keeps both."""

    list_display = ("prefix", "org", "name", "created_at", "expires_at", "last_used_at", "revoked_at")
    list_filter = ("org",)
    actions = ["revoke"]

    ADD_FIELDS = ("org", "name", "expires_at")
    SHOWN_FIELDS = ("org", "name", "prefix", "created_at", "expires_at", "last_used_at", "revoked_at")

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return self.ADD_FIELDS if obj is None else self.SHOWN_FIELDS

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return () if obj is None else self.SHOWN_FIELDS

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            return
        issued, raw = api_key_issue(org=obj.org, name=obj.name, expires_at=obj.expires_at, actor=actor_of(request))
        obj.pk, obj.prefix, obj.digest, obj.created_at = issued.pk, issued.prefix, issued.digest, issued.created_at
        obj.expires_at = issued.expires_at
        obj._state.adding = False
        messages.warning(request, format_html(
            "The new API key is <code>{}</code> — copy it now: it is stored hashed and will not be shown again.", raw))

    @admin.action(description="Revoke selected keys", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        actor = actor_of(request)
        done = sum(api_key_revoke(api_key=k, actor=actor) for k in queryset.select_related("org"))
        self.message_user(request, f"{done} key(s) revoked.")


@admin.register(ApiKeyAudit)
class ApiKeyAuditAdmin(ReadOnlyAdmin):
    list_display = ("at", "org_slug", "key_prefix", "action", "actor", "reason")
    list_filter = ("action",)
    search_fields = ("org_slug", "key_prefix", "actor")

