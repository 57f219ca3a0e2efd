from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from engine.ports import QdrantSearchPort, load_lexicon
from knowledge.eval import EvalInputError, evaluate, iter_miss_lines, read_cases
from knowledge.index import close_client
from knowledge.progress import Progress


class Command(BaseCommand):
    help = ("Run U1–U4 over a JSONL of {question, gold: [{act_nreg, article}]} and print hit@k, recall@k, MRR, "
            "the gold act in the top 5, results per group (and act) and the misses; with --json the last line is "
            "{n, recall_at_k, mrr, hit_at_1.., act_hit_at_5, k, level, by_group, by_act}.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--k", type=int, default=10)
        parser.add_argument("--level", choices=["article", "act"], default="article")
        parser.add_argument("--json", action="store_true", help="print the summary as JSON on the last line")
        parser.add_argument("--sample", type=int, default=None, help="evaluate a random sample of this many lines")
        parser.add_argument("--seed", type=int, default=0, help="seed of --sample")
        parser.add_argument("--show-misses", type=int, default=50, help="print at most this many misses")
        parser.add_argument("--by-act", action="store_true", help="print the results per act too (always in --json)")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["k"] <= 0:
            raise CommandError("--k must be a positive number of results")
        try:
            cases, skipped = read_cases(opts["path"], sample=opts["sample"], seed=opts["seed"])
        except EvalInputError as exc:
            raise CommandError(str(exc)) from exc
        progress = Progress("eval_retrieval", total=len(cases), stream=sys.stderr) if len(cases) > 20 else None
        try:
            report = evaluate(cases, lexicon=load_lexicon(), port=QdrantSearchPort(), k=opts["k"],
                              level=opts["level"], top_k=settings.RETRIEVAL_TOP_K,
                              on_case=(lambda _: progress.advance()) if progress else None)
        finally:
            close_client()
        if progress:
            progress.finish()
        for line in iter_miss_lines(report, opts["show_misses"]):
            self.stdout.write(line)
        s = report.full()
        if skipped:
            self.stdout.write(f"skipped {skipped} lines without a question and gold")
        for name, m in [*s["by_group"].items(), *(s["by_act"].items() if opts["by_act"] else [])]:
            self.stdout.write(f"  {name:16s} {_line(m)}")
        self.stdout.write(f"n={s['n']} level={s['level']} recall@{s['k']}={s['recall_at_k']:.4f} mrr={s['mrr']:.4f} "
                          + _line(s, hits_only=True))
        if opts["json"]:
            self.stdout.write(json.dumps(s, ensure_ascii=False))


def _line(m: dict[str, Any], *, hits_only: bool = False) -> str:
    parts = [f"{k.replace('_at_', '@')}={v:.3f}" for k, v in m.items() if k.startswith(("hit_at", "act_hit"))]
    return " ".join(parts if hits_only else [f"n={m['n']}", *parts, f"mrr={m['mrr']:.3f}"])
