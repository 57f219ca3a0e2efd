"""The engine's overhead per run against a bare chain of 12 Celery tasks, side by side in one run (issue 11).

Both run on the same Redis broker, the same PostgreSQL database and the same worker pool (one prefork child):
- engine: runs of the demo question through all twelve stages; overhead = wall time (created → finished) minus the
  time inside the stages' own code (the sum of the StageEvents' compute_ms);
- bare: chains of 12 tasks that each lock, read and write one JSONB row and send the next (bench/bare_chain.py).
The two alternate, one engine run then one bare chain, so both meet the same load.
Prints p50/p95 of each and the ratio of the medians, and the machine's load. A report, not a test.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/lexery_bench BENCH_BROKER_URL=redis://127.0.0.1:6379/15 \
        .venv/bin/python bench/engine_overhead.py [--runs 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.engine_env import BROKER, QUESTION, ROOT  # sets the bench database and broker before Django loads
from bench.stats import percentile


def _p50_p95(values: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(values), 1), "p95": round(percentile(values, 0.95), 1)}


def prepare() -> None:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from tenancy.models import Specialist

    if not Specialist.objects.filter(slug="demo").exists():
        call_command("seed_demo", stdout=open(os.devnull, "w"))
    call_command("ingest_demo", stdout=open(os.devnull, "w"))
    from bench.bare_chain import create_table

    create_table()


def start_worker(pool: str) -> subprocess.Popen[bytes]:
    from engine.specs import ALL_QUEUES

    queues = ",".join((*ALL_QUEUES, "bench"))
    args = [sys.executable, "-m", "celery", "-A", "lexery", "worker", f"--pool={pool}", "--concurrency=1",
            "-Q", queues, "-I", "bench.bare_chain", "--without-heartbeat", "--without-gossip", "--without-mingle",
            "-l", "WARNING"]
    log = (ROOT / "var" / "bench-worker.log").open("wb")
    return subprocess.Popen(args, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def wait_for(predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise SystemExit("timed out: see var/bench-worker.log")


def engine_run() -> tuple[float, float]:
    """One run (nothing else queued): its wall ms and overhead ms."""
    from django.db.models import Sum

    from runs.models import Run, StageEvent
    from runs.services import run_create
    from tenancy.models import Org, Specialist

    sp = Specialist.objects.get(slug="demo")
    run = run_create(org=Org.objects.get(pk=sp.org_id), specialist=sp, question=QUESTION)
    wait_for(Run.objects.filter(pk=run.pk, status__in=Run.TERMINAL).exists, 60)
    run.refresh_from_db()
    if run.status != Run.Status.DONE:
        raise SystemExit(f"run {run.pk} ended {run.status}: {run.error}")
    assert run.finished_at is not None  # a done run has ended
    wall = (run.finished_at - run.created_at).total_seconds() * 1000
    compute = StageEvent.objects.filter(run=run).aggregate(s=Sum("compute_ms"))["s"] or 0
    return wall, wall - compute


def bare_chain() -> float:
    """One bare chain: its wall ms."""
    from django.db import connection

    from bench.bare_chain import TABLE, bare_link

    chain_id = str(uuid.uuid4())
    with connection.cursor() as cur:
        cur.execute(f"INSERT INTO {TABLE} (id, doc) VALUES (%s, '{{}}')", [chain_id])
    bare_link.apply_async(args=[chain_id, 0], queue="bench")

    def finished() -> bool:
        with connection.cursor() as cur:
            cur.execute(f"SELECT finished IS NOT NULL FROM {TABLE} WHERE id = %s", [chain_id])
            return bool(cur.fetchone()[0])

    wait_for(finished, 30)
    with connection.cursor() as cur:
        cur.execute(f"SELECT extract(epoch from finished - started) * 1000 FROM {TABLE} WHERE id = %s", [chain_id])
        return float(cur.fetchone()[0])


def interleaved(n: int) -> tuple[list[float], list[float], list[float]]:
    """``n`` engine runs and ``n`` bare chains, alternating: on a machine whose load moves (other processes come
    and go) both sides meet the same load, so their ratio means something; one after the other it did not."""
    walls, overheads, bare = [], [], []
    for _ in range(n):
        wall, overhead = engine_run()
        walls.append(wall)
        overheads.append(overhead)
        bare.append(bare_chain())
    return walls, overheads, bare


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--pool", default="prefork", help="the worker pool both sides run on")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    (ROOT / "var").mkdir(exist_ok=True)
    prepare()
    import redis

    redis.Redis.from_url(BROKER).flushdb()
    worker = start_worker(args.pool)
    try:
        time.sleep(3)
        interleaved(3)  # warm: connections, the search index, the model
        walls, overheads, bare = interleaved(args.runs)
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)
    report = {
        "runs": args.runs, "pool": args.pool, "load_avg_1m": round(os.getloadavg()[0], 2),
        "engine_wall_ms": _p50_p95(walls), "engine_overhead_ms": _p50_p95(overheads), "bare_chain_ms": _p50_p95(bare),
    }
    report["ratio_p50"] = round(report["engine_overhead_ms"]["p50"] / report["bare_chain_ms"]["p50"], 2)
    if args.json:
        print(json.dumps(report))
    else:
        for label, key in (("engine wall", "engine_wall_ms"), ("engine overhead", "engine_overhead_ms"),
                           ("bare 12-task chain", "bare_chain_ms")):
            print(f"{label:<19} p50 {report[key]['p50']:7.1f} ms   p95 {report[key]['p95']:7.1f} ms")
        print("(overhead = a run's wall time minus the time inside the stages' own code)")
        print(f"ratio (overhead / bare, p50): {report['ratio_p50']}x   runs={args.runs} pool={args.pool} "
              f"load(1m)={report['load_avg_1m']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
