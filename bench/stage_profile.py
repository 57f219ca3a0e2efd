"""Where the engine's time between stages goes (issue 11, item 7): runs the stages of demo runs one after another
in this process (no worker: the broker only receives the sends), and prints per stage the shell's wall time against
the stage's own compute_ms, the database statements per run with their time, and a cProfile of the shell.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/lexery_bench BENCH_BROKER_URL=redis://127.0.0.1:6379/15 \\
        .venv/bin/python bench/stage_profile.py [--runs 10]

Run ``make bench`` once first (it migrates and loads the demo corpus). A report, not a test."""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.engine_env import BROKER, QUESTION  # sets the bench database and broker before Django loads


class Tally:
    def __init__(self) -> None:
        self.queries: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
        self.wall: dict[str, float] = defaultdict(float)
        self.compute: dict[str, float] = defaultdict(float)


def one_run(tally: Tally, profiler: cProfile.Profile | None) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from engine.models import OutboxMessage
    from engine.shell import execute_stage
    from runs.models import Run, StageEvent
    from runs.services import run_create
    from tenancy.models import Org, Specialist

    sp = Specialist.objects.get(slug="demo")
    run = run_create(org=Org.objects.get(pk=sp.org_id), specialist=sp, question=QUESTION)
    while True:
        row = OutboxMessage.objects.filter(run=run).order_by("-id").first()
        if row is None or StageEvent.objects.filter(run=run, stage=row.stage, attempt=row.attempt).exists():
            break
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            if profiler:
                profiler.enable()
            execute_stage(str(run.pk), row.stage, row.attempt)
            if profiler:
                profiler.disable()
            tally.wall[row.stage] += time.perf_counter() - started
        for q in captured.captured_queries:
            entry = tally.queries[q["sql"][:60]]
            entry[0] += 1
            entry[1] += float(q["time"])
        event = StageEvent.objects.get(run=run, stage=row.stage, attempt=row.attempt)
        tally.compute[row.stage] += (event.compute_ms or 0) / 1000
    run.refresh_from_db()
    if run.status != Run.Status.DONE:
        raise SystemExit(f"run {run.pk} ended {run.status}: {run.error}")


def report(tally: Tally, runs: int, profiler: cProfile.Profile) -> None:
    wall, compute = sum(tally.wall.values()) * 1000 / runs, sum(tally.compute.values()) * 1000 / runs
    print(f"per run: shell wall {wall:.1f} ms, compute {compute:.1f} ms, engine {wall - compute:.1f} ms "
          "(under cProfile: relative, not absolute)")
    for stage, seconds in tally.wall.items():
        print(f"  {stage:<4} wall {seconds * 1000 / runs:6.1f}  compute {tally.compute[stage] * 1000 / runs:6.1f}")
    print("statements per run (count, ms), by their first 60 characters:")
    rows: list[tuple[str, Any]] = sorted(tally.queries.items(), key=lambda kv: -kv[1][1])
    for sql, (count, seconds) in rows[:25]:
        print(f"  {count / runs:5.1f} {seconds * 1000 / runs:7.2f}  {sql}")
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)
    print(out.getvalue())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    import django

    django.setup()
    import redis

    warm, tally, profiler = Tally(), Tally(), cProfile.Profile()
    try:
        for _ in range(3):
            one_run(warm, None)
        for _ in range(args.runs):
            one_run(tally, profiler)
    finally:
        redis.Redis.from_url(BROKER).flushdb()  # the sends nobody consumed
    report(tally, args.runs, profiler)
    return 0


if __name__ == "__main__":
    sys.exit(main())
