"""Replay the offline writer over stored prompts (issue 16): tuning the writer against ``eval_answers`` costs ~3 min a
variant on two cores, nearly all of it U1–U9; the writer alone over the same prompts takes seconds. ``dump`` reads
the runs an ``eval_answers`` pass left in the database (the newest run of each question) and writes what the writer
received — its messages and the citation labels — beside the gold and the delivered citations; ``replay`` runs
only the writer over that file and scores it as ``eval_answers`` does (cites a gold article, first citation gold).

    LEXERY_VAR_DIR=… DATABASE_URL= .venv/bin/python manage.py eval_answers eval/natural/dev.jsonl --show-misses 0
    LEXERY_VAR_DIR=… DATABASE_URL= .venv/bin/python bench/writer_replay.py dump eval/natural/dev.jsonl /tmp/dev.jsonl
    LEXERY_VAR_DIR=… DATABASE_URL= .venv/bin/python bench/writer_replay.py replay /tmp/dev.jsonl \\
        [--variant MEANING_WEIGHT=2 --variant MEANING_WEIGHT=0.5,SOURCE_RANK_DECAY=0.2]

Each ``--variant`` is one more pass with numeric constants of ``llm/providers/offline.py`` set; the first pass
embeds the sentences the shipped vectors lack (~4 min for dev's 257 on two cores), the variants find them in the
process's cache. The replay's citations are the draft's (U10), which U11/U12 deliver unchanged for nearly every
offline answer (dev, session 11: 253 of 257); ``same_as_delivered`` counts them. A report, not a test."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lexery.settings")


def _key(act_nreg: str | None, article: str) -> str:
    return f"{(act_nreg or '?').lower()}#{article}"


def dump(cases_path: Path, out: Path) -> None:
    from django.utils import timezone

    from assemble.config import counter_for_encoding
    from assemble.render import writer_prompt_from_context
    from engine import stage_env
    from engine.runners import _labels
    from knowledge.eval import read_cases
    from legaltext.text import normalize
    from pipeline.context import RunDocument
    from runs.models import Run
    from runs.selectors import run_view

    cases, _ = read_cases(cases_path)
    written = missing = 0
    with out.open("w", encoding="utf-8") as fh:
        for case in cases:
            run = (Run.objects.select_related("specialist", "context").filter(question=normalize(case.question))
                   .order_by("-created_at").first())
            ctx = RunDocument.parse(run.context.document).visible() if run is not None else None
            if run is None or ctx is None or ctx.assembled_prompt is None:
                missing += 1
                continue
            env = stage_env.stage_env(run, "U10", 1, timezone.now())
            prompt = ctx.assembled_prompt
            texts, _ = env.snippets().get_many([k for s in prompt.snippets for k in s.r2_keys])
            count = counter_for_encoding(prompt.meta.tokenizer or env.tokenizer_id)
            wp = writer_prompt_from_context(ctx, texts=texts, corrections=[], count=count)
            answer = run_view(run=run)["answer"] or {}
            fh.write(json.dumps({
                "question": case.question, "gold": [f"{n}#{a}" for n, a in case.gold],
                "messages": [{"role": m.role, "content": m.content} for m in wp.messages],
                "labels": dict(_labels(env, ctx)),
                "delivered": [_key(c["act_nreg"], c["article"]) for c in answer.get("citations", [])],
            }, ensure_ascii=False) + "\n")
            written += 1
    print(f"{written} prompts written to {out}; {missing} questions without a run (as run_create stores the "
          "question) that reached U9")


def _override(offline: Any, variant: str) -> dict[str, Any]:
    """Set a variant's constants ("MEANING_WEIGHT=2,SOURCE_RANK_DECAY=0.2"); returns the values they replaced."""
    before: dict[str, Any] = {}
    for item in filter(None, variant.split(",")):
        name, _, value = item.partition("=")
        if not isinstance(getattr(offline, name, None), int | float):
            raise SystemExit(f"{item}: no numeric constant {name!r} in llm/providers/offline.py")
        before[name] = getattr(offline, name)
        setattr(offline, name, type(before[name])(float(value)))
    return before


def replay(path: Path, variants: list[str]) -> list[dict[str, Any]]:
    """The writer as it is, then each variant: the sentence vectors the first pass embeds stay in the process's
    cache, so a variant costs seconds."""
    from legaltext.citations import basis_first, find_citations
    from llm.providers import offline
    from pipeline.messages import Message

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    prompts = [[Message(role=m["role"], content=m["content"]) for m in row["messages"]] for row in rows]
    reports = []
    for variant in ["", *variants]:
        before = _override(offline, variant)
        cites_gold = first_gold = same = 0
        for row, messages in zip(rows, prompts, strict=True):
            text = offline.compose_answer(messages)
            cited = list(dict.fromkeys(_key(c.act_nreg, c.article)
                                       for c in basis_first(find_citations(text, row["labels"]))))
            cites_gold += bool(set(cited) & set(row["gold"]))
            first_gold += bool(cited) and cited[0] in row["gold"]
            same += cited == row["delivered"]
        for name, value in before.items():
            setattr(offline, name, value)
        n = len(rows) or 1
        reports.append({"variant": variant or "as is", "n": len(rows), "cites_gold": round(cites_gold / n, 4),
                        "first_citation_gold": round(first_gold / n, 4), "same_as_delivered": same})
    return reports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="write the writer prompts of the stored eval_answers runs")
    d.add_argument("cases", type=Path)
    d.add_argument("out", type=Path)
    r = sub.add_parser("replay", help="run only the offline writer over a dump and score it")
    r.add_argument("path", type=Path)
    r.add_argument("--variant", action="append", default=[], metavar="NAME=VALUE[,NAME=VALUE]",
                   help="numeric constants of llm/providers/offline.py to set for one more pass (repeatable)")
    args = parser.parse_args()
    import django

    django.setup()  # wires the writer's sentence meaning (engine/apps.py), as in a worker
    if args.command == "dump":
        dump(args.cases, args.out)
    else:
        for report in replay(args.path, args.variant):
            print(json.dumps(report, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
