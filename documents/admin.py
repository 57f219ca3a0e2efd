"""User documents for operators: read-only rows (uploads come through the API); deleting one removes its stored
files and its points like the API does."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from documents.models import UserDocument
from documents.services import document_delete


@admin.register(UserDocument)
class UserDocumentAdmin(admin.ModelAdmin):
    list_display = ("created_at", "filename", "org", "user_ref", "kind", "size", "status", "n_chunks")
    list_filter = ("status", "kind", "org", "created_at")
    search_fields = ("filename", "user_ref", "id")
    readonly_fields = ("id", "org", "user_ref", "filename", "content_type", "kind", "size", "storage_key", "status",
                       "n_chunks", "n_chars", "error", "created_at", "updated_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: UserDocument) -> None:
        document_delete(document=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[UserDocument]) -> None:
        for document in queryset:
            document_delete(document=document)
