import json

from django.contrib import admin
from django.utils.html import format_html

from runs.models import ApiKey, CostLedgerEntry, Org, Run, RunContext, Specialist, StageEvent


@admin.register(Org)
class OrgAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "created_at")
    search_fields = ("slug", "name")


@admin.register(Specialist)
class SpecialistAdmin(admin.ModelAdmin):
    list_display = ("slug", "org", "name", "created_at")
    list_filter = ("org",)
    search_fields = ("slug", "name")


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("prefix", "org", "name", "created_at", "revoked_at")
    readonly_fields = ("prefix", "digest", "created_at")


class StageEventInline(admin.TabularInline):
    model = StageEvent
    extra = 0
    can_delete = False
    fields = ("step", "stage", "attempt", "outcome", "duration_ms", "next_action", "decided_by", "reason")
    readonly_fields = fields


class LedgerInline(admin.TabularInline):
    model = CostLedgerEntry
    extra = 0
    can_delete = False
    fields = ("stage", "attempt", "call_ordinal", "provider", "model", "prompt_tokens", "completion_tokens",
              "cached_tokens", "cost_usd", "latency_ms", "status")
    readonly_fields = fields


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ("id", "org", "specialist", "status", "current_stage", "steps", "created_at")
    list_filter = ("status", "current_stage", "org", "specialist", "created_at")
    search_fields = ("id", "question")
    readonly_fields = ("id", "org", "specialist", "question", "status", "current_stage", "steps", "flags", "error",
                       "created_at", "started_at", "finished_at", "context_pretty")
    inlines = [StageEventInline, LedgerInline]

    @admin.display(description="RunContext")
    def context_pretty(self, obj: Run) -> str:
        doc = obj.context.document if hasattr(obj, "context") else {}
        return format_html("<pre style='white-space:pre-wrap'>{}</pre>",
                           json.dumps(doc, ensure_ascii=False, indent=2))


@admin.register(RunContext)
class RunContextAdmin(admin.ModelAdmin):
    list_display = ("run", "version", "updated_at")
    readonly_fields = ("run", "document", "version", "updated_at")


@admin.register(StageEvent)
class StageEventAdmin(admin.ModelAdmin):
    list_display = ("run", "step", "stage", "attempt", "outcome", "duration_ms", "next_action", "decided_by")
    list_filter = ("stage", "outcome", "decided_by")


@admin.register(CostLedgerEntry)
class CostLedgerEntryAdmin(admin.ModelAdmin):
    list_display = ("created_at", "run", "stage", "provider", "model", "prompt_tokens", "completion_tokens",
                    "cached_tokens", "cost_usd", "status")
    list_filter = ("provider", "model", "stage", "status")
