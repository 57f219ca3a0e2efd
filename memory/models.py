"""What an org's end user told before: short facts, kept per (org, user_ref), offered to U7 as evidence."""

from __future__ import annotations

import uuid

from django.db import models

from runs.models import Run
from tenancy.models import Org


class MemoryItem(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    org = models.ForeignKey(Org, on_delete=models.CASCADE, related_name="memory_items")
    user_ref = models.CharField(max_length=100, help_text="The org's own id for its end user.")
    text = models.TextField()
    # The text is also in the snippet store under this key: U9 and U10 load every evidence text by key.
    r2_key = models.CharField(max_length=300)
    source_run = models.ForeignKey(Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
                                   help_text="The run the fact came up in, if any.")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["org", "user_ref"], name="memory_org_user")]

    def __str__(self) -> str:
        return f"{self.org_id}/{self.user_ref}: {self.text[:40]}"
