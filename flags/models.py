"""Feature flags: a global default with per-org and per-specialist overrides (specialist > org > global)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from tenancy.models import Org, Specialist

# Changing any flag value (global default or override) needs this permission; staff with view permissions only
# can look at every flag screen but not change one.
CHANGE_PERMISSION = "flags.change_flag_overrides"


class FeatureFlag(models.Model):
    key = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    default_enabled = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        permissions = [("change_flag_overrides", "Can change flag values (global defaults and overrides)")]

    def __str__(self) -> str:
        return self.key


class FlagOverride(models.Model):
    flag = models.ForeignKey(FeatureFlag, on_delete=models.CASCADE, related_name="overrides")
    org = models.ForeignKey("tenancy.Org", on_delete=models.CASCADE, null=True, blank=True)
    specialist = models.ForeignKey("tenancy.Specialist", on_delete=models.CASCADE, null=True, blank=True)
    enabled = models.BooleanField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(org__isnull=False, specialist__isnull=True)
                           | models.Q(org__isnull=True, specialist__isnull=False)),
                name="flag_override_exactly_one_scope",
            ),
            models.UniqueConstraint(fields=["flag", "org"], name="uniq_flag_org_override",
                                    condition=models.Q(org__isnull=False)),
            models.UniqueConstraint(fields=["flag", "specialist"], name="uniq_flag_specialist_override",
                                    condition=models.Q(specialist__isnull=False)),
        ]

    def __str__(self) -> str:
        scope = f"specialist {self.specialist}" if self.specialist_id else f"org {self.org}"
        return f"{self.flag.key} @ {scope} = {self.enabled}"


class SpecialistFlags(Specialist):
    """The flag screen per specialist: a proxy so the console lists specialists under the flags app."""

    class Meta:
        proxy = True
        verbose_name = "flags by specialist"
        verbose_name_plural = "flags by specialist"


class OrgFlags(Org):
    """The flag screen per org (the level between the global default and a specialist's override)."""

    class Meta:
        proxy = True
        verbose_name = "flags by org"
        verbose_name_plural = "flags by org"


class FlagAudit(models.Model):
    """One row per change of a flag value, written by ``flags.services`` in the transaction of the change.
    Scope rows keep labels beside their foreign keys so the trail survives a deleted org or specialist."""

    class Scope(models.TextChoices):
        GLOBAL = "global"
        ORG = "org"
        SPECIALIST = "specialist"

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                              related_name="+")
    actor_username = models.CharField(max_length=150)
    flag = models.ForeignKey(FeatureFlag, on_delete=models.SET_NULL, null=True, blank=True, related_name="audit")
    flag_key = models.CharField(max_length=100, db_index=True)
    scope = models.CharField(max_length=16, choices=Scope.choices)
    scope_label = models.CharField(max_length=250)
    org = models.ForeignKey(Org, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    specialist = models.ForeignKey(Specialist, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    # For an override, None means "no override: inherits"; for the global scope, the default value.
    before = models.BooleanField(null=True)
    after = models.BooleanField(null=True)
    reason = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "flag audit entry"
        verbose_name_plural = "flag audit"

    def __str__(self) -> str:
        return f"{self.flag_key} @ {self.scope_label}: {self.before} → {self.after} by {self.actor_username}"
