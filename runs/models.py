"""Runs and what a run leaves behind: its context document and its stage events (its cost ledger is
``llm.models.CostLedgerEntry``; the org and specialist it runs for are in ``tenancy``)."""

from __future__ import annotations

import uuid

from django.db import models

from tenancy.models import Org, Specialist


class Stage(models.TextChoices):
    U1 = "U1", "U1 Intake"
    U2 = "U2", "U2 Query profiling"
    U3 = "U3", "U3 Planning"
    U4 = "U4", "U4 Retrieval"
    U5 = "U5", "U5 Gate"
    U6 = "U6", "U6 Recovery"
    U7 = "U7", "U7 Evidence assembly"
    U8 = "U8", "U8 Legal reasoning"
    U9 = "U9", "U9 Assemble"
    U10 = "U10", "U10 Writer"
    U11 = "U11", "U11 Verify"
    U12 = "U12", "U12 Deliver"


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        AWAITING_CLARIFICATION = "awaiting_clarification"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    TERMINAL = (Status.DONE, Status.FAILED, Status.CANCELLED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    org = models.ForeignKey(Org, on_delete=models.CASCADE, related_name="runs")
    specialist = models.ForeignKey(Specialist, on_delete=models.PROTECT, related_name="runs")
    question = models.TextField()
    status = models.CharField(max_length=32, choices=Status.choices, default=Status.QUEUED, db_index=True)
    current_stage = models.CharField(max_length=4, choices=Stage.choices, blank=True)
    steps = models.PositiveIntegerField(default=0, help_text="Stage executions so far (bounded by RUN_MAX_STEPS).")
    flags = models.JSONField(default=dict, blank=True, help_text="Resolved flags snapshotted at U1.")
    flag_overrides = models.JSONField(default=dict, blank=True,
                                      help_text="Per-run flag overrides (e.g. ask --assembler on), applied at U1.")
    limits = models.JSONField(default=dict, blank=True, help_text="The bounds this run ran under (caps, retries).")
    conversation_id = models.CharField(max_length=100, blank=True, db_index=True)
    # The org's own id for its end user (opaque to us): scopes the user's memory, documents and history.
    user_ref = models.CharField(max_length=100, blank=True, db_index=True)
    error = models.TextField(blank=True)
    # The id of the web request that created the run (X-Request-ID): sends made later with no request behind them
    # (the reaper's) carry it, so every log line of the run leads back to that request.
    request_id = models.CharField(max_length=128, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Purged (runs/lifecycle.py): its context, events, history copy and personal fields are gone; the row stays
    # for the cost ledger that points at it.
    purged_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"run {self.id} ({self.status})"

    @property
    def is_terminal(self) -> bool:
        return self.status in self.TERMINAL


class RunContext(models.Model):
    """The run's working document: one section per stage, written under a row lock with a version check."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="context", primary_key=True)
    document = models.JSONField(default=dict)
    version = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"context of {self.run_id} v{self.version}"


class StageEvent(models.Model):
    class Outcome(models.TextChoices):
        RUNNING = "running"
        OK = "ok"
        ERROR = "error"
        SKIPPED = "skipped"

    class DecidedBy(models.TextChoices):
        RULE = "rule"
        CHEAP = "cheap"
        PREMIUM = "premium"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    stage = models.CharField(max_length=4, choices=Stage.choices)
    attempt = models.PositiveIntegerField(default=1)
    step = models.PositiveIntegerField(default=0, help_text="Position in the run's walk.")
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.RUNNING)
    next_action = models.CharField(max_length=32, blank=True)
    decided_by = models.CharField(max_length=16, choices=DecidedBy.choices, blank=True)
    reason = models.CharField(max_length=300, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    # Deliveries of this attempt that claimed it (1 normally; more when a worker died or the reaper re-sent it), and
    # when the latest did: a second delivery arriving while the first may still be computing leaves it alone.
    deliveries = models.PositiveIntegerField(default=1)
    claimed_at = models.DateTimeField(null=True, blank=True)
    # Time inside the stage's own code (the runner), beside duration_ms (the whole shell): their difference is
    # the engine's overhead (make bench).
    compute_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["step", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "stage", "attempt"], name="uniq_stage_attempt_per_run")
        ]

    def __str__(self) -> str:
        return f"{self.stage}#{self.attempt} {self.outcome}"
