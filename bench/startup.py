"""Start-up benchmark: ``manage.py ask`` in a fresh process, N times, against whatever index the environment points
at (LEXERY_VAR_DIR / DATABASE_URL; the goal of issue 15 is ≤ 2 s on the core index). Reports wall time and peak
RSS (p50 / p95 / min / max) and the machine's load average before and after. Not a test: timings vary with the
machine's load, so it reports, it does not assert.

    LEXERY_VAR_DIR=/work/var-core DATABASE_URL= .venv/bin/python bench/startup.py --runs 10 [--json] \
        [--question "..."] [--python other/.venv/bin/python --manage other/manage.py]   # another checkout

Each run's answer (status, support level, answer and citations: what comes before the stage timeline) must be the
same every time; the bench prints it once and fails if a run differs or exits non-zero. Two checkouts measured in
turn on one state directory replace each other's stored act lexicon (it is named by the code that built it): give
each its own LEXICON_CACHE_DIR, or count on the warm-up run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.stats import percentile

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "Скільки днів щорічної відпустки має працівник?"


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10, help="fresh processes to start, one after another")
    parser.add_argument("--warmup", type=int, default=1,
                        help="runs first, not counted: the first process after a code or catalog change stores the "
                             "act lexicon and the parsed BPE file for the ones after it")
    parser.add_argument("--question", action="append", help="asked in turn (default: one annual-leave question)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter (another checkout's .venv)")
    parser.add_argument("--manage", type=Path, default=ROOT / "manage.py", help="the manage.py to run")
    parser.add_argument("--json", action="store_true")
    return parser.parse_args()


def answer_part(stdout: str) -> str:
    """What must not change between builds: the status, support level, answer and citations (the run id, the
    stage timeline and its milliseconds do)."""
    lines = stdout.splitlines()
    end = lines.index("Stage timeline:") if "Stage timeline:" in lines else len(lines)
    if len(lines) > 1 and lines[1].startswith("Run "):
        lines[1] = "Run:" + lines[1].partition(":")[2]  # "Run <id>: done (support: partial)" without the id
    return "\n".join(lines[:end]).strip()


def ask_once(python: str, manage: Path, question: str) -> tuple[float, float, int, str]:
    """One fresh ``manage.py ask``: wall seconds, CPU seconds (user + system: less swayed by other work on the
    machine than the wall time), the child's own peak RSS in MB (wait4, not the max over all children), its
    answer."""
    env = {**os.environ, "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING")}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen([python, str(manage), "ask", question], stdout=out, stderr=err, env=env,
                                cwd=manage.parent)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage; Popen must not reap it first
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise SystemExit(f"ask exited {proc.returncode}: {stderr[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, answer_part(stdout)


SKIPPED_DIRS = {".venv", "var", "test-artifacts", "node_modules"}


def uncompiled_modules(root: Path) -> int:
    """The project's modules with no current bytecode: with PYTHONDONTWRITEBYTECODE set, every fresh process compiles
    them again (`make migrate` compiles them ahead)."""
    stale = 0
    for source in root.rglob("*.py"):
        if SKIPPED_DIRS.intersection(source.relative_to(root).parts):
            continue
        cached = Path(importlib.util.cache_from_source(str(source)))
        stale += not cached.exists() or cached.stat().st_mtime < source.stat().st_mtime
    return stale


def _summary(values: list[float]) -> dict[str, float]:
    return {"p50": percentile(values, 0.5), "p95": percentile(values, 0.95), "min": min(values), "max": max(values)}


def main() -> None:
    args = _args()
    questions = args.question or [QUESTION]
    load_before = os.getloadavg()
    uncompiled = uncompiled_modules(args.manage.resolve().parent)
    walls: list[float] = []
    cpus: list[float] = []
    rss: list[float] = []
    answers: dict[str, str] = {}
    for _ in range(args.warmup):
        ask_once(args.python, args.manage, questions[0])
    for i in range(args.runs):
        question = questions[i % len(questions)]
        wall, cpu, peak_mb, answer = ask_once(args.python, args.manage, question)
        if answers.setdefault(question, answer) != answer:
            raise SystemExit(f"run {i + 1}: the answer to {question!r} changed between runs")
        walls.append(wall)
        cpus.append(cpu)
        rss.append(peak_mb)
    report = {"runs": args.runs, "manage": str(args.manage), "wall_s": _summary(walls), "cpu_s": _summary(cpus),
              "peak_rss_mb": _summary(rss), "uncompiled_modules": uncompiled,
              "load_before": load_before, "load_after": os.getloadavg(), "samples_s": [round(w, 3) for w in walls]}
    if args.json:
        print(json.dumps({**report, "answers": answers}, ensure_ascii=False, indent=2))
        return
    for answer in answers.values():
        print(answer, end="\n\n")
    w, c, r = report["wall_s"], report["cpu_s"], report["peak_rss_mb"]
    print(f"ask in a fresh process, {args.runs} runs ({args.manage}):")
    print(f"  wall     p50 {w['p50']:.2f} s  p95 {w['p95']:.2f} s  (min {w['min']:.2f}, max {w['max']:.2f})")
    print(f"  CPU      p50 {c['p50']:.2f} s  p95 {c['p95']:.2f} s  (min {c['min']:.2f}, max {c['max']:.2f})")
    print(f"  peak RSS p50 {r['p50']:.0f} MB  p95 {r['p95']:.0f} MB")
    if uncompiled:
        print(f"  {uncompiled} of the project's modules had no current bytecode (run `make migrate` first: with "
              "PYTHONDONTWRITEBYTECODE set, each process compiled them again)")
    print("  load average before {:.2f} {:.2f} {:.2f}, after {:.2f} {:.2f} {:.2f}".format(
        *load_before, *report["load_after"]))


if __name__ == "__main__":
    main()
