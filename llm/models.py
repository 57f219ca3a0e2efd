"""The cost ledger: one row per model call, written by the gateway (``llm/gateway.py``).

Moved here from ``runs`` (issue 14) with its table (``runs_costledgerentry``) and rows. The row points at its run by
the model's name, ``"runs.Run"``: the ledger needs the foreign key (PROTECT keeps billing rows from vanishing with a
run) but nothing in ``llm`` imports ``runs`` — the link is the framework's, resolved when the apps are loaded."""

from __future__ import annotations

from decimal import Decimal

from django.db import models


class CostLedgerEntry(models.Model):
    """One row per model call (LLM or embedding) and delivery. The idempotency key keeps a retry of the same delivery
    from billing twice; a redelivery that sends the call again is its own row (``delivery`` > 1)."""

    # PROTECT: billing records never vanish with their run (a run that spent anything cannot be deleted; the
    # purge keeps it, issue 12). Calls outside a run have no run at all.
    run = models.ForeignKey("runs.Run", on_delete=models.PROTECT, related_name="ledger", null=True, blank=True)
    stage = models.CharField(max_length=4, blank=True)
    attempt = models.PositiveIntegerField(default=1)
    call_ordinal = models.PositiveIntegerField(default=1)
    # Which delivery of the stage task sent the call: 2 and on are redeliveries (the worker died after the call was
    # sent, the broker delivered the task again and it was sent again). Each is billed: the provider bills it.
    delivery = models.PositiveIntegerField(default=1)
    kind = models.CharField(max_length=16, default="chat")  # chat | embedding
    role = models.CharField(max_length=32, blank=True)  # writer | triage | orch | verifier | query
    provider = models.CharField(max_length=32)
    model = models.CharField(max_length=100)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cached_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=8, default=Decimal("0"))
    price_version = models.CharField(max_length=32, blank=True)
    latency_ms = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, default="ok")  # ok | error
    error = models.CharField(max_length=300, blank=True)
    idempotency_key = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        db_table = "runs_costledgerentry"
        ordering = ["created_at", "id"]
        verbose_name_plural = "cost ledger entries"

    def __str__(self) -> str:
        return f"{self.provider}/{self.model} {self.cost_usd} USD"
