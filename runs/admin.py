"""The run side of the operators' console: the run list with its filters, the run page (runs/admin_views.py),
the run actions and the dashboard, plus the plain tables behind them."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from django.contrib import admin, messages
from django.db.models import Exists, OuterRef, Q, QuerySet, Sum
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from runs import admin_login, admin_views
from runs.auth import api_key_issue, api_key_revoke
from runs.lifecycle import org_delete
from runs.models import ApiKey, ApiKeyAudit, CostLedgerEntry, Org, Run, RunContext, Specialist, StageEvent
from runs.services import RunStateError, run_cancel

admin.site.login = admin_login.throttled(admin.site.login)  # type: ignore[method-assign]
admin.site.site_header = _("Lexery console")
admin.site.site_title = _("Lexery console")
admin.site.index_title = _("Runs, flags and knowledge")

ID_LIKE = re.compile(r"^[0-9a-fA-F-]{6,36}$")


@admin.register(Org)
class OrgAdmin(admin.ModelAdmin):
    """An org is deleted only through ``org_delete`` (its users' files, chunks, vectors and memory go first): the
    plain delete is off, the action below is the way."""

    list_display = ("slug", "name", "created_at")
    search_fields = ("slug", "name")
    actions = ["delete_with_data"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        if not request.user.has_perm("runs.delete_org"):  # type: ignore[union-attr]
            actions.pop("delete_with_data", None)
        return actions

    @admin.action(description=_("Delete selected orgs with their users' documents, memory and run content"))
    def delete_with_data(self, request: HttpRequest, queryset: QuerySet[Org]) -> None:
        actor = f"admin:{request.user.get_username()}"  # type: ignore[union-attr]
        for org in list(queryset):
            done = org_delete(org=org, actor=actor)
            kept = "" if done.deleted else gettext(" (kept for its billing rows; runs purged, keys revoked)")
            self.message_user(request, gettext("%(org)s: %(documents)d document(s), %(memory)d memory item(s), "
                                               "%(runs)d run(s) cleared%(kept)s.") % {
                "org": org.slug, "documents": done.documents, "memory": done.memory_items, "runs": done.runs,
                "kept": kept})


@admin.register(Specialist)
class SpecialistAdmin(admin.ModelAdmin):
    list_display = ("slug", "org", "name", "flags_link", "created_at")
    list_filter = ("org",)
    search_fields = ("slug", "name")

    @admin.display(description=_("flags"))
    def flags_link(self, obj: Specialist) -> SafeString:
        url = reverse("admin:flags_specialistflags_changelist") + f"?q={obj.slug}"
        return format_html('<a href="{}">{}</a>', url, gettext("flags"))


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records, not settings: viewable by staff with view permission, never added, changed or deleted here."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Adding a key issues one through ``api_key_issue`` and shows it once, in the message after saving; it is never
    shown again (only its digest is stored). A key is revoked, not deleted: the audit keeps both."""

    list_display = ("prefix", "org", "name", "created_at", "expires_at", "last_used_at", "revoked_at")
    list_filter = ("org",)
    actions = ["revoke"]

    ADD_FIELDS = ("org", "name", "expires_at")
    SHOWN_FIELDS = ("org", "name", "prefix", "created_at", "expires_at", "last_used_at", "revoked_at")

    def get_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:  # type: ignore[override]
        return self.ADD_FIELDS if obj is None else self.SHOWN_FIELDS  # (narrower than the stubs' union)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return () if obj is None else self.SHOWN_FIELDS

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            return
        issued, raw = api_key_issue(org=obj.org, name=obj.name, expires_at=obj.expires_at,
                                    actor=f"admin:{request.user.get_username()}")  # type: ignore[union-attr]
        obj.pk, obj.prefix, obj.digest, obj.created_at = issued.pk, issued.prefix, issued.digest, issued.created_at
        obj.expires_at = issued.expires_at
        obj._state.adding = False
        messages.warning(request, format_html(
            gettext("The new API key is <code>{}</code> — copy it now: it is stored hashed and will not be shown "
                    "again."), raw))

    @admin.action(description=_("Revoke selected keys"), permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        actor = f"admin:{request.user.get_username()}"  # type: ignore[union-attr]
        done = sum(api_key_revoke(api_key=k, actor=actor) for k in queryset.select_related("org"))
        self.message_user(request, gettext("%(n)d key(s) revoked.") % {"n": done})


@admin.register(ApiKeyAudit)
class ApiKeyAuditAdmin(ReadOnlyAdmin):
    list_display = ("at", "org_slug", "key_prefix", "action", "actor", "reason")
    list_filter = ("action",)
    search_fields = ("org_slug", "key_prefix", "actor")


# --- run list filters ---------------------------------------------------------------------------------------
class YesNoFilter(admin.SimpleListFilter):
    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", gettext("yes")), ("no", gettext("no"))]

    def condition(self) -> Q:
        raise NotImplementedError

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "yes":
            return queryset.filter(self.condition())
        if self.value() == "no":
            return queryset.exclude(self.condition())
        return queryset


class HadRetriesFilter(YesNoFilter):
    """A stage ran more than once: a retrieval rerun (U6→U4) or a write retry (U11→U10)."""

    title = _("had retries")
    parameter_name = "retries"

    def condition(self) -> Q:
        return Q(Exists(StageEvent.objects.filter(run=OuterRef("pk"), attempt__gt=1)))


class AwaitedClarificationFilter(YesNoFilter):
    title = _("awaited clarification")
    parameter_name = "clarification"

    def condition(self) -> Q:
        asked = StageEvent.objects.filter(run=OuterRef("pk"), next_action="ASK_CLARIFICATION")
        return (Q(status=Run.Status.AWAITING_CLARIFICATION) | Q(Exists(asked))
                | Q(context__document__has_key="clarification"))


class CoverageGapFilter(YesNoFilter):
    """The law asked about is not in the index (DocList said so): the answer had to say it honestly."""

    title = _("coverage gap")
    parameter_name = "gap"

    def condition(self) -> Q:
        return Q(context__document__has_key="coverage_gap")


class SpecialistListFilter(admin.RelatedFieldListFilter):
    """The specialist choices with their orgs in one query (a specialist's name includes its org)."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        return [(str(s.pk), str(s)) for s in Specialist.objects.select_related("org").order_by("org__slug", "slug")]


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ("short_id", "created", "status_badge", "stage", "specialist", "question_short", "steps",
                    "prompt_path", "cost")
    list_display_links = ("short_id",)
    list_filter = ("status", "current_stage", "org", ("specialist", SpecialistListFilter), "created_at",
                   HadRetriesFilter, AwaitedClarificationFilter, CoverageGapFilter)
    search_fields = ("question",)
    search_help_text = _("Search by question text or run id (or its first characters).")
    date_hierarchy = "created_at"
    list_select_related = ("org", "specialist__org")
    list_per_page = 50
    actions = ("cancel_selected",)
    change_list_template = "admin/runs/run/change_list.html"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # runs are created through the API or `ask`

    def get_queryset(self, request: HttpRequest) -> QuerySet[Run]:
        return super().get_queryset(request).annotate(cost_usd=Sum("ledger__cost_usd"))

    def get_search_results(self, request: HttpRequest, queryset: QuerySet[Run],
                           search_term: str) -> tuple[QuerySet[Run], bool]:
        term = search_term.strip()
        if ID_LIKE.match(term):
            try:
                return queryset.filter(pk=uuid.UUID(term)), False
            except ValueError:  # a prefix: hyphens are stored on PostgreSQL, not on SQLite
                by_id = queryset.filter(Q(id__istartswith=term) | Q(id__istartswith=term.replace("-", "")))
                if by_id.exists():
                    return by_id, False
        return super().get_search_results(request, queryset, search_term)

    @admin.display(description=_("run"), ordering="id")
    def short_id(self, obj: Run) -> str:
        return str(obj.pk)[:8]

    @admin.display(description=_("created (UTC)"), ordering="created_at")
    def created(self, obj: Run) -> str:
        return obj.created_at.strftime("%Y-%m-%d %H:%M:%S")

    @admin.display(description=_("stage"), ordering="current_stage")
    def stage(self, obj: Run) -> str:
        return obj.current_stage

    @admin.display(description=_("status"), ordering="status")
    def status_badge(self, obj: Run) -> SafeString:
        return format_html('<span class="badge {}">{}</span>', obj.status, obj.status.replace("_", " "))

    @admin.display(description=_("question"))
    def question_short(self, obj: Run) -> str:
        return obj.question if len(obj.question) <= 80 else obj.question[:79] + "…"

    @admin.display(description=_("prompt"))
    def prompt_path(self, obj: Run) -> str:
        value = (obj.flags or {}).get("prompt_assembler_enabled")
        return "" if value is None else ("layered" if value else "legacy")

    @admin.display(description=_("cost $"), ordering="cost_usd")
    def cost(self, obj: Run) -> str:
        value = getattr(obj, "cost_usd", None)
        return "" if value is None else f"{value:.4f}"

    @admin.action(description=_("Cancel the selected runs (queued, running or waiting)"), permissions=["change"])
    def cancel_selected(self, request: HttpRequest, queryset: QuerySet[Run]) -> None:
        done, refused = 0, 0
        for run in queryset:
            try:
                run_cancel(run=run)
                done += 1
            except RunStateError:
                refused += 1
        self.message_user(request, gettext("%(done)d run(s) cancelled; %(refused)d had already finished.")
                          % {"done": done, "refused": refused},
                          messages.SUCCESS if done else messages.WARNING)

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        mine = [
            path("dashboard/", wrap(lambda r: admin_views.dashboard(self, r)), name="runs_run_dashboard"),
            path("<str:object_id>/snippet/", wrap(lambda r, object_id: admin_views.run_snippet(self, r, object_id)),
                 name="runs_run_snippet"),
            path("<str:object_id>/cancel/", wrap(lambda r, object_id: admin_views.run_cancel_action(
                self, r, object_id)), name="runs_run_cancel"),
            path("<str:object_id>/rerun/", wrap(lambda r, object_id: admin_views.run_rerun_action(
                self, r, object_id)), name="runs_run_rerun"),
        ]
        return mine + super().get_urls()

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> HttpResponse:
        return admin_views.run_page(self, request, object_id)


@admin.register(RunContext)
class RunContextAdmin(admin.ModelAdmin):
    list_display = ("run", "version", "updated_at")
    readonly_fields = ("run", "version", "updated_at", "document_pretty")
    exclude = ("document",)

    @admin.display(description=_("document"))
    def document_pretty(self, obj: RunContext) -> SafeString:
        return format_html("<pre style='white-space:pre-wrap'>{}</pre>",
                           json.dumps(obj.document, ensure_ascii=False, indent=2))


@admin.register(StageEvent)
class StageEventAdmin(ReadOnlyAdmin):
    list_display = ("run", "step", "stage", "attempt", "outcome", "duration_ms", "next_action", "decided_by")
    list_filter = ("stage", "outcome", "decided_by")


@admin.register(CostLedgerEntry)
class CostLedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "run", "stage", "provider", "model", "prompt_tokens", "completion_tokens",
                    "cached_tokens", "cost_usd", "status")
    list_filter = ("provider", "model", "stage", "status")
