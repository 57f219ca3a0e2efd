"""The cost ledger in the operators' console: a record, viewed and never edited."""

from __future__ import annotations

from django.contrib import admin

from lexery.admin_records import ReadOnlyAdmin
from llm.models import CostLedgerEntry


@admin.register(CostLedgerEntry)
class CostLedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "run", "stage", "provider", "model", "prompt_tokens", "completion_tokens",
                    "cached_tokens", "cost_usd", "status")
    list_filter = ("provider", "model", "stage", "status")
