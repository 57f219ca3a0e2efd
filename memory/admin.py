"""Memory items for operators: read-mostly (they come through the API); an operator may delete one."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from memory.models import MemoryItem
from memory.services import memory_item_delete


@admin.register(MemoryItem)
class MemoryItemAdmin(admin.ModelAdmin):
    list_display = ("created_at", "org", "user_ref", "text", "source_run")
    list_filter = ("org", "created_at")
    search_fields = ("user_ref", "text", "id")
    readonly_fields = ("id", "org", "user_ref", "text", "r2_key", "source_run", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: MemoryItem) -> None:
        memory_item_delete(item=obj)  # the stored text goes with the row

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[MemoryItem]) -> None:
        for item in queryset:
            memory_item_delete(item=item)
