"""The outbox: every stage the engine decides to run is a row, written in the transaction that decided it, and sent
to the broker after that transaction commits. A row the broker never saw (the broker down, the process killed
between commit and send) is sent by the reaper; a row sent but never finished is sent again (engine/reaper.py)."""

from __future__ import annotations

from django.db import models

from runs.models import Run


class OutboxMessage(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="outbox")
    stage = models.CharField(max_length=4)
    attempt = models.PositiveIntegerField()
    queue = models.CharField(max_length=32)
    created_at = models.DateTimeField(auto_now_add=True)
    # Not indexed: the sent mark is then a HOT update (no indexed column changes, no index entries written),
    # and it is written once per stage. The reaper finds unsent and stalled rows through the few active runs
    # (runs_run.status, then the (run, stage, attempt) index), not through this column.
    sent_at = models.DateTimeField(null=True, blank=True)
    sends = models.PositiveIntegerField(default=0, help_text="How many times it was handed to the broker.")
    last_error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["run", "stage", "attempt"],
                                               name="uniq_outbox_stage_attempt")]

    def __str__(self) -> str:
        return f"{self.run_id} {self.stage}#{self.attempt} sent {self.sends}×"
