"""U5's support labels over evaluation questions (issue 16, "support labels that mean something"): U1–U5 for each
question, then per file how many runs the gate labels ``strong`` / ``partial`` / ``weak`` / ``none`` and why, and —
for a file with gold articles — how often the article the answer leads with is gold under each label. A ``.txt``
file is one question a line with no gold: questions on law the 45 acts do not hold
(``eval/natural/outside_the_law.txt``), where ``weak`` is the honest label. Not a test: a report.

    LEXERY_VAR_DIR=… .venv/bin/python bench/gate_labels.py eval/natural/dev.jsonl eval/natural/outside_the_law.txt \
        [--show weak] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lexery.settings")

LEVELS = ("strong", "partial", "weak", "none")


def _questions(path: Path) -> list[tuple[str, set[str]]]:
    """(question, gold article keys) for a JSONL evaluation file; (question, no gold) for a .txt list."""
    if path.suffix == ".txt":
        return [(line.strip(), set()) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    from knowledge.eval import EvalReport, read_cases

    report = EvalReport(k=10, level="article")
    return [(case.question, set(report.gold_keys(case))) for case in read_cases(path, sample=None, seed=0)[0]]


def _label(question: str, lexicon: Any, port: Any) -> tuple[str, str, str | None]:
    """U1–U5 for one question: the gate's support level, its reason and the first article's key."""
    from django.conf import settings

    from knowledge.eval import run_question
    from recovery.gate import GatePolicy, gate

    profile, raw, trace = run_question(question, lexicon=lexicon, port=port, top_k=settings.RETRIEVAL_TOP_K)
    decision = gate(profile, raw, trace, GatePolicy())
    first = raw.hits[0] if raw.hits else None
    return decision.support_level, decision.reason, f"{first.act_nreg.lower()}#{first.article}" if first else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--show", choices=LEVELS, default=None, help="print the questions given this label")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import django

    django.setup()
    from engine.ports import QdrantSearchPort, load_lexicon

    lexicon, port = load_lexicon(), QdrantSearchPort()
    summary: dict[str, Any] = {}
    for path in args.files:
        labels: Counter[str] = Counter()
        led_by_gold: Counter[str] = Counter()
        reasons: Counter[str] = Counter()
        for question, gold in _questions(path):
            level, reason, first = _label(question, lexicon, port)
            labels[level] += 1
            reasons[reason] += 1
            led_by_gold[level] += bool(gold) and first in gold
            if args.show == level:
                print(f"{path.stem} {level} {reason} first={first} gold={'yes' if first in gold else 'no'} {question}")
        row = {"n": sum(labels.values()), "labels": {lv: labels[lv] for lv in LEVELS}, "reasons": dict(reasons)}
        if path.suffix != ".txt":
            row["led_by_gold"] = {lv: led_by_gold[lv] for lv in LEVELS}
        summary[path.stem] = row
        print(f"{path.stem}: " + " ".join(f"{lv}={labels[lv]}" + (f" ({led_by_gold[lv]} led by gold)"
                                                                  if path.suffix != ".txt" else "")
                                           for lv in LEVELS) + f" reasons={dict(reasons)}")
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))


if __name__ == "__main__":
    main()
