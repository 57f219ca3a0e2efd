"""The DocList act catalog as a table: which acts exist, what they are called, and whether LLDBI indexes them."""

from __future__ import annotations

from django.db import models


class Act(models.Model):
    nreg = models.CharField(max_length=64, unique=True, help_text="Rada registration number, e.g. 322-08.")
    nreg_key = models.CharField(max_length=64, unique=True, help_text="Case-folded nreg for lookups.")
    title = models.TextField(blank=True)  # catalog titles of resolutions run to 3,500 characters
    abbreviations = models.JSONField(default=list, blank=True)
    aliases = models.JSONField(default=list, blank=True, help_text="Other names, inflected forms included.")
    official_numbers = models.JSONField(default=list, blank=True,
                                        help_text="Numbers by which texts cite it, e.g. 2811-IX.")
    corpus_ids = models.JSONField(default=list, blank=True,
                                  help_text="Ids a corpus file gives the act instead of its nreg, e.g. 'ЗУ ЕК'.")
    indexed = models.BooleanField(default=False, help_text="Its articles are in the LLDBI collection.")
    n_chunks = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["nreg"]

    def __str__(self) -> str:
        return f"{self.nreg} {self.title}"
