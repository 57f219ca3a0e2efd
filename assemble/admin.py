"""Operators' side of the assembler: corrections per specialist, and the shadow compare of a run's prompt."""

from __future__ import annotations

import json

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html

from assemble.layers import PromptBudgetExceeded
from assemble.models import Correction, RunPromptDiff
from assemble.render import PromptSourcesMissing
from assemble.selectors import PromptDiff, run_prompt_diff


@admin.register(Correction)
class CorrectionAdmin(admin.ModelAdmin):
    list_display = ("id", "specialist", "short_question", "active", "created_at")
    list_filter = ("active", "specialist__org", "specialist")
    list_editable = ("active",)
    search_fields = ("question", "bad_answer", "fixed_answer", "note")
    raw_id_fields = ("run",)
    readonly_fields = ("created_at", "updated_at")

    @admin.display(description="question")
    def short_question(self, obj: Correction) -> str:
        return (obj.question[:80] + "…") if len(obj.question) > 80 else obj.question


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
