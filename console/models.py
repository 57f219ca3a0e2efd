"""The console keeps no data of its own: one proxy gives the prompt OFF/ON compare its admin page."""

from __future__ import annotations

from runs.models import Run


class RunPromptDiff(Run):
    """The shadow compare in the admin: a run's prompt with the flag OFF and ON (a read-only proxy of Run)."""

    class Meta:
        proxy = True
        verbose_name = "prompt diff (flag OFF vs ON)"
        verbose_name_plural = "prompt diffs (flag OFF vs ON)"
