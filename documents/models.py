"""A user's uploaded document: the file in storage, its text chunked into the snippet store and indexed apart from
the law (its own Qdrant Edge shard, or ``DOCS_COLLECTION`` on a Qdrant server), scoped to (org, user_ref)."""

from __future__ import annotations

import uuid

from django.db import models

from tenancy.models import Org


class UserDocument(models.Model):
    class Status(models.TextChoices):
        EXTRACTING = "extracting"  # stored; a worker extracts and chunks its text (documents.extract)
        INDEXING = "indexing"  # stored and chunked; the retrieval worker embeds and upserts it
        READY = "ready"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    org = models.ForeignKey(Org, on_delete=models.CASCADE, related_name="documents")
    user_ref = models.CharField(max_length=100, help_text="The org's own id for its end user.")
    filename = models.CharField(max_length=255)
    content_type = models.CharField(max_length=100)
    kind = models.CharField(max_length=8, help_text="txt, md, pdf or docx")
    size = models.PositiveIntegerField(help_text="bytes")
    storage_key = models.CharField(max_length=400, help_text="The original file in the snippet storage.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.EXTRACTING, db_index=True)
    n_chunks = models.PositiveIntegerField(default=0)
    n_chars = models.PositiveIntegerField(default=0, help_text="extracted text")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["org", "user_ref"], name="document_org_user")]

    def __str__(self) -> str:
        return f"{self.filename} ({self.status})"
