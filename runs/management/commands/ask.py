from __future__ import annotations

import gc
import json
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from assemble.render import PromptSourcesMissing
from assemble.selectors import run_writer_prompt
from flags.registry import PROMPT_ASSEMBLER_ENABLED
from runs.models import Run
from runs.selectors import run_events, run_view
from runs.services import RunInputError, run_create
from tenancy.models import Org, Specialist


class Command(BaseCommand):
    help = "Ask a question end to end in the configured mode; print the answer, citations, timeline and cost."
    # Django's system checks import every URL module and view (the console, the API, drf-spectacular's views) to
    # check them: a tenth of a second or more of a fresh ``ask`` that uses none of them. ``manage.py check``, the
    # test suite and every web process still run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("question")
        parser.add_argument("--specialist", default="demo", help="specialist slug (default: demo)")
        parser.add_argument("--org", default=None, help="org slug, when several orgs use the same specialist slug")
        parser.add_argument("--json", action="store_true", help="print the run object of GET /api/v1/runs/{id}")
        parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for a worker")
        parser.add_argument("--show-prompt", action="store_true",
                            help="add the writer's prompt (messages, layer manifest, assembler, tokens)")
        parser.add_argument("--assembler", choices=("on", "off"), default=None,
                            help="override prompt_assembler_enabled for this run only (recorded on the run)")

    def handle(self, *args: Any, **opts: Any) -> None:
        # What Django's start-up built lives as long as this process: the cyclic collector need not walk it again.
        # Loading the act lexicon and the citation name table set off full collections that walked all of it
        # (~0.1 s of a fresh ask, measured with gc.callbacks); the collector still runs over what the run allocates.
        gc.freeze()
        specialists = Specialist.objects.select_related("org").filter(slug=opts["specialist"])
        if opts["org"]:
            specialists = specialists.filter(org__slug=opts["org"])
        specialist = specialists.first()
        if specialist is None:
            of_org = f" in org {opts['org']!r}" if opts["org"] else ""
            raise CommandError(f"no specialist {opts['specialist']!r}{of_org}: run 'python manage.py seed_demo' first")
        org: Org = specialist.org
        try:
            overrides = {} if opts["assembler"] is None else {PROMPT_ASSEMBLER_ENABLED: opts["assembler"] == "on"}
            run = run_create(org=org, specialist=specialist, question=opts["question"], flag_overrides=overrides)
        except RunInputError as exc:
            raise CommandError(str(exc)) from exc
        deadline = time.monotonic() + opts["timeout"]
        while not settings.CELERY_TASK_ALWAYS_EAGER and time.monotonic() < deadline:
            run.refresh_from_db()
            if run.is_terminal or run.status == Run.Status.AWAITING_CLARIFICATION:
                break
            time.sleep(0.2)
        run = Run.objects.select_related("specialist", "context").get(pk=run.pk)
        view = run_view(run=run)
        if opts["show_prompt"]:
            view["prompt"] = self._prompt(run)
        if opts["json"]:
            self.stdout.write(json.dumps(view, ensure_ascii=False, indent=2))
        else:
            self._print(run, view)
        if run.status == Run.Status.FAILED:
            raise CommandError(f"run {run.id} failed: {run.error}")
        if not run.is_terminal and run.status != Run.Status.AWAITING_CLARIFICATION:
            raise CommandError(f"run {run.id} did not finish within {opts['timeout']:.0f}s (status {run.status})")

    @staticmethod
    def _prompt(run: Run) -> dict[str, Any] | None:
        """Exactly what the writer saw, rebuilt from the run's refs; None when the run ended before U9."""
        try:
            return run_writer_prompt(run=run).as_json()
        except PromptSourcesMissing:
            return None

    def _print(self, run: Run, view: dict[str, Any]) -> None:
        w = self.stdout.write
        w(f"Питання: {run.question}")
        w(f"Run {run.id}: {run.status} (support: {view['support_level']})\n")
        if view["answer"]:
            w(view["answer"]["text"] + "\n")
            w("Цитати: " + (", ".join(c["article_ref"] for c in view["answer"]["citations"]) or "немає"))
        if view["coverage_gap"]:
            w(f"Прогалина покриття: {view['coverage_gap']}")
        clarification = view["clarification"]
        if clarification and run.status == Run.Status.AWAITING_CLARIFICATION:
            w(clarification["question"])
            w(f"Відповідь: python manage.py clarify {run.id} --option <nreg>  "
              f"({', '.join(o['nreg'] for o in clarification['options'])})")
        w("\nStage timeline:")
        for e in run_events(run=run):
            w(f"  {e.step:>2} {e.stage:<4} #{e.attempt} {e.outcome:<7} {e.duration_ms or 0:>6} ms  → "
              f"{e.next_action:<18} [{e.decided_by}] {e.reason}")
        cost = view["cost"]
        w(f"\nCost: {cost['usd']} USD, {cost['prompt_tokens']} prompt + {cost['completion_tokens']} completion tokens")
        if "prompt" in view:
            prompt = view["prompt"]
            if prompt is None:
                w("\nPrompt: none (the run ended before U9)")
                return
            w(f"\nPrompt ({prompt['assembler']}, {prompt['total_tokens']} tokens):")
            for m in prompt["messages"]:
                w(f"--- {m['role']} ---\n{m['content']}")
            for layer in prompt["layer_manifest"] or []:
                w(f"  layer {layer['id']}: {layer['tokenCount']} tokens"
                  + (" (truncated)" if layer["truncated"] else ""))
