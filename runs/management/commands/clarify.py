from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from runs.models import Run
from runs.selectors import run_view
from runs.services import RunInputError, RunStateError, run_clarification_answer


class Command(BaseCommand):
    help = "Answer a run's clarification question (an offered act number or free text) and resume it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("run_id")
        group = parser.add_mutually_exclusive_group(required=True)
        group.add_argument("--option", help="the nreg of an offered act, e.g. 1618-15")
        group.add_argument("--answer", help="free text naming one of the offered acts, e.g. ЦПК")

    def handle(self, *args: Any, **opts: Any) -> None:
        run = Run.objects.filter(pk=opts["run_id"]).first() if _is_uuid(opts["run_id"]) else None
        if run is None:
            raise CommandError(f"no run {opts['run_id']!r}")
        try:
            run_clarification_answer(run=run, option=opts["option"], answer=opts["answer"])
        except (RunInputError, RunStateError) as exc:
            raise CommandError(str(exc)) from exc
        run = Run.objects.select_related("specialist", "context").get(pk=run.pk)
        self.stdout.write(json.dumps(run_view(run=run), ensure_ascii=False, indent=2))


def _is_uuid(value: str) -> bool:
    import uuid

    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True
