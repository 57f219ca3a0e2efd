from django.contrib import admin

from knowledge.models import Act


@admin.register(Act)
class ActAdmin(admin.ModelAdmin):
    list_display = ("nreg", "title", "indexed", "n_chunks", "updated_at")
    list_filter = ("indexed",)
    search_fields = ("nreg", "title")
