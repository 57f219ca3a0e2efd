"""Operators' side of the assembler: corrections per specialist (the shadow compare of a run's prompt is the
console's, ``console/admin.py``)."""

from __future__ import annotations

from django.contrib import admin

from assemble.models import Correction


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
