"""Shadow compare before switching a specialist on: a run's prompt with the flag OFF and ON, side by side."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from assemble.render import PromptSourcesMissing
from console.prompt_diff import run_prompt_diff
from runs.models import Run


class Command(BaseCommand):
    help = ("Render a run's writer prompt both ways — flag OFF (legacy) and ON (layered) — from its stored refs; "
            "print a unified diff and both layer manifests. The run is not changed.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run_id")
        parser.add_argument("--json", action="store_true", help="print both prompts, the diff and the manifests")

    def handle(self, *args: Any, **opts: Any) -> None:
        try:
            run = Run.objects.get(pk=uuid.UUID(opts["run_id"]))
        except (ValueError, Run.DoesNotExist):
            raise CommandError(f"no run {opts['run_id']!r}") from None
        try:
            diff = run_prompt_diff(run=run)
        except PromptSourcesMissing as exc:
            raise CommandError(str(exc)) from exc
        if opts["json"]:
            self.stdout.write(json.dumps({
                "run_id": str(run.pk), "took": diff.took, "legacy": diff.legacy.as_json(),
                "layered": diff.layered.as_json() if diff.layered else None, "layered_error": diff.layered_error,
                "diff": diff.unified()}, ensure_ascii=False, indent=2))
            return
        w = self.stdout.write
        w(f"Run {run.pk} took the {diff.took} path.")
        w(f"flag OFF: {diff.legacy.total_tokens} tokens; flag ON: "
          + (f"{diff.layered.total_tokens} tokens" if diff.layered else f"not possible — {diff.layered_error}"))
        w("\n" + (diff.unified() or "(no difference)\n"))
        w("Layer manifest, flag OFF: none (the legacy path has no layers)")
        w("Layer manifest, flag ON:")
        for layer in (diff.layered.layer_manifest or []) if diff.layered else []:
            refs = f"  refs={','.join(layer.source_refs)}" if layer.source_refs else ""
            w(f"  {layer.priority} {layer.id:<17} tokens={layer.token_count:>5} "
              f"budget={layer.token_budget if layer.token_budget is not None else '-':>5} "
              f"chars={layer.char_count:>6} never_truncate={layer.never_truncate!s:<5} "
              f"truncated={layer.truncated!s:<5}{refs}")
