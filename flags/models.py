"""Feature flags: a global default with per-org and per-specialist overrides (specialist > org > global)."""

from __future__ import annotations

from django.db import models


class FeatureFlag(models.Model):
    key = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    default_enabled = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.key


class FlagOverride(models.Model):
    flag = models.ForeignKey(FeatureFlag, on_delete=models.CASCADE, related_name="overrides")
    org = models.ForeignKey("runs.Org", on_delete=models.CASCADE, null=True, blank=True)
    specialist = models.ForeignKey("runs.Specialist", on_delete=models.CASCADE, null=True, blank=True)
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
