"""Operator feedback the layered assembler learns from (seed 004, the ``correction`` layer)."""

from __future__ import annotations

from django.db import models


class Correction(models.Model):
    """A bad answer and the answer it should have been, attached to a specialist. Active corrections of a
    specialist become few-shot examples in its prompt when the layered assembler is on; which ones a run used is
    recorded by id on the run, so its prompt can be rebuilt later."""

    specialist = models.ForeignKey("tenancy.Specialist", on_delete=models.CASCADE, related_name="corrections")
    run = models.ForeignKey("runs.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
                            help_text="The run whose answer was corrected, when there was one.")
    question = models.TextField(blank=True, help_text="The question the bad answer was given to.")
    bad_answer = models.TextField()
    fixed_answer = models.TextField()
    note = models.CharField(max_length=300, blank=True, help_text="Why the answer was wrong (operators only).")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["specialist", "active", "-created_at"], name="correction_active_idx")]

    def __str__(self) -> str:
        return f"correction #{self.pk} for {self.specialist}"
