"""The operators' console inside the Django admin: its name and throttled login, the run list with its filters and
actions, the run page and the dashboard (``console/views.py``), and the prompt OFF/ON compare."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from django.contrib import admin, messages
from django.db.models import Q, QuerySet, Sum
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path
from django.utils.html import format_html
from django.utils.safestring import SafeString

from assemble.layers import PromptBudgetExceeded
from assemble.render import PromptSourcesMissing
from console import login, views
from console.filters import AwaitedClarificationFilter, CoverageGapFilter, HadRetriesFilter
from console.models import RunPromptDiff
from console.prompt_diff import PromptDiff, run_prompt_diff
from runs.models import Run
from runs.services import RunStateError, run_cancel
from tenancy.admin import SpecialistListFilter

# The admin site's login view, wrapped: replacing one view of the default site is how Django lets a project do it.
admin.site.login = login.throttled(admin.site.login)  # type: ignore[method-assign]  # same signature, throttled
admin.site.site_header = "Lexery console"
admin.site.site_title = "Lexery console"
admin.site.index_title = "Runs, flags and knowledge"

ID_LIKE = re.compile(r"^[0-9a-fA-F-]{6,36}$")


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ("short_id", "created", "status_badge", "stage", "specialist", "question_short", "steps",
                    "prompt_path", "cost")
    list_display_links = ("short_id",)
    list_filter = ("status", "current_stage", "org", ("specialist", SpecialistListFilter), "created_at",
                   HadRetriesFilter, AwaitedClarificationFilter, CoverageGapFilter)
    search_fields = ("question",)
    search_help_text = "Search by question text or run id (or its first characters)."
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

    @admin.display(description="run", ordering="id")
    def short_id(self, obj: Run) -> str:
        return str(obj.pk)[:8]

    @admin.display(description="created (UTC)", ordering="created_at")
    def created(self, obj: Run) -> str:
        return obj.created_at.strftime("%Y-%m-%d %H:%M:%S")

    @admin.display(description="stage", ordering="current_stage")
    def stage(self, obj: Run) -> str:
        return obj.current_stage

    @admin.display(description="status", ordering="status")
    def status_badge(self, obj: Run) -> SafeString:
        return format_html('<span class="badge {}">{}</span>', obj.status, obj.status.replace("_", " "))

    @admin.display(description="question")
    def question_short(self, obj: Run) -> str:
        return obj.question if len(obj.question) <= 80 else obj.question[:79] + "…"

    @admin.display(description="prompt")
    def prompt_path(self, obj: Run) -> str:
        value = (obj.flags or {}).get("prompt_assembler_enabled")
        return "" if value is None else ("layered" if value else "legacy")

    @admin.display(description="cost $", ordering="cost_usd")
    def cost(self, obj: Run) -> str:
        value = getattr(obj, "cost_usd", None)
        return "" if value is None else f"{value:.4f}"

    @admin.action(description="Cancel the selected runs (queued, running or waiting)", permissions=["change"])
    def cancel_selected(self, request: HttpRequest, queryset: QuerySet[Run]) -> None:
        done, refused = 0, 0
        for run in queryset:
            try:
                run_cancel(run=run)
                done += 1
            except RunStateError:
                refused += 1
        self.message_user(request, f"{done} run(s) cancelled; {refused} had already finished.",
                          messages.SUCCESS if done else messages.WARNING)

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        mine = [
            path("dashboard/", wrap(lambda r: views.dashboard(self, r)), name="runs_run_dashboard"),
            path("<str:object_id>/snippet/", wrap(lambda r, object_id: views.run_snippet(self, r, object_id)),
                 name="runs_run_snippet"),
            path("<str:object_id>/cancel/", wrap(lambda r, object_id: views.run_cancel_action(
                self, r, object_id)), name="runs_run_cancel"),
            path("<str:object_id>/rerun/", wrap(lambda r, object_id: views.run_rerun_action(
                self, r, object_id)), name="runs_run_rerun"),
        ]
        return mine + super().get_urls()

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> HttpResponse:
        return views.run_page(self, request, object_id)


@admin.register(RunPromptDiff)
class RunPromptDiffAdmin(admin.ModelAdmin):
    """View only: rendering both prompts reads the run and the snippet store and changes nothing."""

    list_display = ("id", "specialist", "status", "created_at")
    list_filter = ("status", "specialist")
    search_fields = ("id", "question")
    fields = ("id", "specialist", "question", "flags", "prompt_diff", "manifests")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    @staticmethod
    def _diff(obj: RunPromptDiff) -> PromptDiff:
        """Rendered once per page: both fields show the same comparison."""
        cached: PromptDiff | None = getattr(obj, "_prompt_diff", None)
        if cached is None:
            cached = run_prompt_diff(run=obj)
            obj._prompt_diff = cached  # type: ignore[attr-defined]  # a per-request cache on the instance
        return cached

    @admin.display(description="unified diff, flag OFF → ON")
    def prompt_diff(self, obj: RunPromptDiff) -> str:
        try:
            diff = self._diff(obj)
        except (PromptSourcesMissing, PromptBudgetExceeded) as exc:
            return str(exc)
        head = f"This run took the {diff.took} path.\n\n"
        return format_html("<pre style='white-space:pre-wrap'>{}</pre>", head + (diff.unified() or "(no difference)"))

    @admin.display(description="layer manifests")
    def manifests(self, obj: RunPromptDiff) -> str:
        try:
            diff = self._diff(obj)
        except PromptSourcesMissing as exc:
            return str(exc)
        body = {"flag OFF": None, "flag ON": diff.layered.manifest_json() if diff.layered else diff.layered_error}
        return format_html("<pre style='white-space:pre-wrap'>{}</pre>", json.dumps(body, ensure_ascii=False,
                                                                                  indent=2))
