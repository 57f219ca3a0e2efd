"""How many ORCH model calls the deterministic canary saves (seed 001), measured on real runs.

    LEXERY_VAR_DIR=<dir with the acts indexed> python bench/canary_savings.py FILE.jsonl [FILE.jsonl ...]

Runs every question end to end in the embedded mode and counts, over all ORCH decisions: those taken by rule,
those where the rules left a real choice (a model would be asked without the canary), and those the canary
actually sent to the cheap or premium model. Prints the ratio saved."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

import django

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lexery.settings")
os.environ.setdefault("LOG_LEVEL", "WARNING")
django.setup()

from django.core.management import call_command  # noqa: E402

from llm.models import CostLedgerEntry  # noqa: E402
from runs.models import StageEvent  # noqa: E402
from runs.services import run_create  # noqa: E402
from tenancy.models import Org, Specialist  # noqa: E402

BRANCH_STAGES = ("U5", "U6", "U11")  # where ORCH has more than one way to go


def main(paths: list[str]) -> int:
    call_command("migrate", verbosity=0)
    org, _ = Org.objects.get_or_create(slug="bench", defaults={"name": "bench"})
    specialist, _ = Specialist.objects.get_or_create(org=org, slug="bench", defaults={"name": "bench"})
    questions = [json.loads(line)["question"] for p in paths for line in Path(p).read_text().splitlines()
                 if line.strip()]
    decided: Counter[str] = Counter()
    branch_decisions = 0
    runs = []
    for i, question in enumerate(questions, start=1):
        run = run_create(org=org, specialist=specialist, question=question)
        runs.append(run.pk)
        events = StageEvent.objects.filter(run=run)
        decided.update(e.decided_by or "rule" for e in events)
        branch_decisions += events.filter(stage__in=BRANCH_STAGES).count()
        print(f"\r{i}/{len(questions)} runs", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    total = sum(decided.values())
    model_calls = CostLedgerEntry.objects.filter(run_id__in=runs, role="orch").count()
    without_canary = total  # the seed's ORCH consults its model after every stage
    print(json.dumps({"runs": len(runs), "orch_decisions": total, "branch_decisions": branch_decisions,
                      "decided_by": dict(decided), "orch_model_calls_with_canary": model_calls,
                      "orch_model_calls_without_canary": without_canary,
                      "saved_ratio": round(1 - model_calls / without_canary, 3) if without_canary else None},
                     ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
