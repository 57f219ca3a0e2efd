"""The run records in the operators' console: a run's context document and its stage events as plain tables, and
the org admin with its delete-with-data action (``runs.lifecycle.org_delete``). The run list, the run page and the
dashboard are the console's (``console/admin.py``)."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString

from lexery.admin_records import ReadOnlyAdmin
from runs.lifecycle import org_delete
from runs.models import RunContext, StageEvent
from tenancy.admin import OrgAdmin, actor_of
from tenancy.models import Org


@admin.register(Org)
class OrgDataAdmin(OrgAdmin):
    """Deleting an org (its users' files, chunks, vectors and memory go first) is this action; the plain delete is
    off (``OrgAdmin``). Registered here, beside the lifecycle service that reaches every app holding org data."""

    actions = ["delete_with_data"]

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        if not request.user.has_perm("tenancy.delete_org"):
            actions.pop("delete_with_data", None)
        return actions

    @admin.action(description="Delete selected orgs with their users' documents, memory and run content")
    def delete_with_data(self, request: HttpRequest, queryset: QuerySet[Org]) -> None:
        actor = actor_of(request)
        for org in list(queryset):
            done = org_delete(org=org, actor=actor)
            kept = "" if done.deleted else " (kept for its billing rows; runs purged, keys revoked)"
            self.message_user(request, f"{org.slug}: {done.documents} document(s), {done.memory_items} memory "
                                       f"item(s), {done.runs} run(s) cleared{kept}.")


@admin.register(RunContext)
class RunContextAdmin(admin.ModelAdmin):
    list_display = ("run", "version", "updated_at")
    readonly_fields = ("run", "version", "updated_at", "document_pretty")
    exclude = ("document",)

    @admin.display(description="document")
    def document_pretty(self, obj: RunContext) -> SafeString:
        return format_html("<pre style='white-space:pre-wrap'>{}</pre>",
                           json.dumps(obj.document, ensure_ascii=False, indent=2))


@admin.register(StageEvent)
class StageEventAdmin(ReadOnlyAdmin):
    list_display = ("run", "step", "stage", "attempt", "outcome", "duration_ms", "next_action", "decided_by")
    list_filter = ("stage", "outcome", "decided_by")
