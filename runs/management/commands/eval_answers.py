from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.eval import EvalInputError, read_cases
from knowledge.progress import Progress
from runs.answer_eval import evaluate_answers
from runs.services import RunInputError
from tenancy.models import Specialist


class Command(BaseCommand):
    help = ("Run each question of a JSONL {question, gold: [{act_nreg, article}]} end to end (U1–U12, in-process) "
            "and score the delivered answers: cites a gold article, first citation gold, strong precision. "
            "Every question is a real run, kept for inspection in the console.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--specialist", default="demo", help="specialist slug (default: demo)")
        parser.add_argument("--json", action="store_true", help="print the summary as JSON on the last line")
        parser.add_argument("--sample", type=int, default=None, help="evaluate a random sample of this many lines")
        parser.add_argument("--seed", type=int, default=0, help="seed of --sample")
        parser.add_argument("--show-misses", type=int, default=30, help="print at most this many misses")

    def handle(self, *args: Any, **opts: Any) -> None:
        if not settings.CELERY_TASK_ALWAYS_EAGER:
            raise CommandError("eval_answers runs the pipeline in-process: unset CELERY_BROKER_URL "
                               "(or set CELERY_TASK_ALWAYS_EAGER=true)")
        specialist = Specialist.objects.select_related("org").filter(slug=opts["specialist"]).first()
        if specialist is None:
            raise CommandError(f"no specialist {opts['specialist']!r}: run 'python manage.py seed_demo' first")
        try:
            cases, _ = read_cases(opts["path"], sample=opts["sample"], seed=opts["seed"])
        except EvalInputError as exc:
            raise CommandError(str(exc)) from exc
        progress = Progress("eval_answers", total=len(cases), stream=sys.stderr)
        try:
            report = evaluate_answers(cases, org=specialist.org, specialist=specialist,
                                      on_case=lambda _: progress.advance())
        except RunInputError as exc:  # a blank, over-long or unstorable question of the file
            raise CommandError(f"{opts['path']}: a question was refused: {exc}") from exc
        progress.finish()
        for r in report.misses()[:opts["show_misses"]]:
            gold = ", ".join(f"{n}#{a}" for n, a in r.case.gold)
            self.stdout.write(f"MISS {r.case.question!r} gold=[{gold}] support={r.support} "
                              f"cited=[{', '.join(r.citations)}]")
        s = report.summary()
        self.stdout.write(f"n={s['n']} cites_gold={s['cites_gold']:.3f} first_citation_gold="
                          f"{s['first_citation_gold']:.3f} strong_precision={s['strong_precision']:.3f} "
                          f"support={s['support']}")
        if opts["json"]:
            self.stdout.write(json.dumps(s, ensure_ascii=False))
