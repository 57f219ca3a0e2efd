"""Retrieval latency benchmark: U4 (query embedding + dense + BM25 + exact path + fusion) over real questions,
against whatever LLDBI the environment points at (LEXERY_VAR_DIR / QDRANT_URL). Not a test: timings vary
with the machine's load, so it reports, it does not assert — and prints the one-minute load average before and
after the timed passes beside them.

    LEXERY_VAR_DIR=/work/var-scale .venv/bin/python bench/retrieval_latency.py \
        ../shared/data/eval/dev_questions.jsonl ../shared/data/eval/dev_definitions.jsonl [--repeat 3] [--json] \
        [--busy]   # one core kept busy meanwhile
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipeline.contracts import SearchPlan

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.stats import percentile

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lexery.settings")



def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=3, help="passes over the questions (the first warms caches)")
    parser.add_argument("--limit", type=int, default=200, help="at most this many questions")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--busy", action="store_true", help="keep one core busy with another process meanwhile")
    return parser.parse_args()


def _plans(questions: list[str]) -> tuple[list[SearchPlan], list[float]]:
    """U1-U3 for every question (what U4 is given), and how long U2-U3 took for each."""
    from django.conf import settings

    from engine.ports import load_lexicon
    from pipeline.contracts import SpecialistProfile
    from pipeline.stages.intake import intake
    from pipeline.stages.planning import plan_search
    from pipeline.stages.profiling import profile_query

    lexicon = load_lexicon()
    plans = []
    profile_ms = []
    for q in questions:
        started = time.perf_counter()
        section = intake(question=q, specialist=SpecialistProfile(slug="bench"), max_chars=10_000,
                         now=datetime.now(UTC))
        profile = profile_query(section, lexicon)
        plans.append(plan_search(question=section.normalized, profile=profile, top_k=settings.RETRIEVAL_TOP_K))
        profile_ms.append((time.perf_counter() - started) * 1000)
    return plans, profile_ms


def _measure(plans: list[SearchPlan], repeat: int) -> list[float]:
    """U4 per plan in ms, over ``repeat`` passes; the first pass warms caches and is not counted (unless alone)."""
    from engine.ports import QdrantSearchPort
    from pipeline.stages.retrieval import retrieve

    timings: list[float] = []
    for rep in range(max(repeat, 1)):
        port = QdrantSearchPort()  # a fresh port: no query-vector cache carried between passes
        for plan in plans:
            started = time.perf_counter()
            retrieve(plan, port, attempt=1)
            if rep > 0 or repeat == 1:
                timings.append((time.perf_counter() - started) * 1000)
    return timings


def _points(port: object) -> int:
    """The chunks searched; for the shards, opening them is what this times (the collection is not opened)."""
    from engine.ports import QdrantSearchPort
    from knowledge import index, searchindex

    assert isinstance(port, QdrantSearchPort)
    if port.shards:
        shard = searchindex.get_index(port.collection).shard
        return shard.engine.info().points_count if shard else 0
    return index.count(index.get_client(), port.collection)


def main() -> int:
    args = _args()
    import django

    django.setup()
    from django.conf import settings

    from engine.ports import QdrantSearchPort
    from knowledge import index
    from knowledge.eval import read_cases
    from pipeline.stages.retrieval import retrieve

    questions: list[str] = []
    for path in args.files:
        questions += [c.question for c in read_cases(path)[0]]
    plans, profile_ms = _plans(questions[: args.limit])
    port = QdrantSearchPort()
    started = time.perf_counter()
    points = _points(port)
    open_s = time.perf_counter() - started
    started = time.perf_counter()
    retrieve(plans[0], port, attempt=1)  # loads the model
    warm_s = time.perf_counter() - started
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    load_before = os.getloadavg()[0]
    try:
        timings = _measure(plans, args.repeat)
        result: dict[str, object] = {
            "points": points, "questions": len(plans), "samples": len(timings),
            "backend": port.backend,
            "embed_model": QdrantSearchPort().embed_model, "e5_engine": settings.E5_ENGINE,
            "busy_core": bool(busy),
            "u4_p50_ms": round(statistics.median(timings), 1), "u4_p95_ms": round(percentile(timings, 0.95), 1),
            "u2_u3_p50_ms": round(statistics.median(profile_ms), 1),
            "open_s": round(open_s, 1), "first_query_s": round(warm_s, 1),
            "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2)}
    finally:
        if busy:
            busy.kill()
    index.close_client()
    print(json.dumps(result) if args.json else "\n".join(f"{k}: {v}" for k, v in result.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
