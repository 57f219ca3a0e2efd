"""Who calls us: an org, its specialists (the configured legal assistants) and its API keys with their audit.

The models came from ``runs`` (issue 14) and keep their tables (``runs_org`` …) and rows: ``db_table`` names them."""

from __future__ import annotations

from django.db import models


class Org(models.Model):
    slug = models.SlugField(unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "runs_org"

    def __str__(self) -> str:
        return self.slug


class Specialist(models.Model):
    """A configured legal assistant of an org: persona ("soul"), role, directives, red lines, contract."""

    org = models.ForeignKey(Org, on_delete=models.CASCADE, related_name="specialists")
    slug = models.SlugField()
    name = models.CharField(max_length=200)
    soul = models.TextField(blank=True, help_text="Persona / identity text.")
    role_skeleton = models.TextField(blank=True)
    directives = models.JSONField(default=list, blank=True, help_text="A list of directive strings.")
    red_lines = models.TextField(blank=True)
    response_contract = models.TextField(blank=True)
    cost_cap_usd = models.DecimalField(max_digits=10, decimal_places=4, null=True, blank=True,
                                       help_text="Per-run cost cap for this specialist; empty = RUN_COST_CAP_USD.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "runs_specialist"
        constraints = [models.UniqueConstraint(fields=["org", "slug"], name="uniq_specialist_slug_per_org")]

    def __str__(self) -> str:
        return f"{self.org.slug}/{self.slug}"


class ApiKey(models.Model):
    """A per-org API key. Only a SHA-256 digest is stored; the key is shown once when created."""

    org = models.ForeignKey(Org, on_delete=models.CASCADE, related_name="api_keys")
    prefix = models.CharField(max_length=12, db_index=True)
    digest = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="empty: never (keys made before expiry)")
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "runs_apikey"

    def __str__(self) -> str:
        return f"{self.org.slug}:{self.prefix}…"


class ApiKeyAudit(models.Model):
    """Who created or revoked which key, when: the trail of key changes (append-only, read-only in admin)."""

    class Action(models.TextChoices):
        CREATED = "created"
        REVOKED = "revoked"

    # The trail outlives the key and its org: prefix and org are copied, the link is cleared when they go.
    api_key = models.ForeignKey(ApiKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="audit")
    key_prefix = models.CharField(max_length=12)
    org_slug = models.CharField(max_length=64)
    action = models.CharField(max_length=16, choices=Action.choices)
    actor = models.CharField(max_length=150, help_text="an admin user, or the command that did it")
    reason = models.CharField(max_length=300, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "runs_apikeyaudit"
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.org_slug}:{self.key_prefix}… {self.action} by {self.actor}"
