"""API throughput under gunicorn (issue 15, item 5): POST + GET /api/v1/runs against two baselines served by the
same gunicorn (bench/api_urls.py), from a pure-Python load generator on loopback: the issue's bare DRF endpoint (no
key, no database: what DRF costs), and a keyed one (the same API-key check as the run API and one row read: what any
authenticated endpoint reading PostgreSQL costs at the least). The three loads take turns in short rounds, so a
neighbour's burst of load falls on all of them alike.

POST writes the run and its U1 outbox row and sends U1 to the bench's Redis database (BENCH_API_BROKER_URL, DB 12,
flushed before and after) where no worker consumes it: the web process's share of a run, which is what the API
costs; the stages run on workers. The throttle is off (API_THROTTLE_RATE empty) or it would answer 429s.
Prints requests/s and p50/p95/p99 of each, the ratios to both baselines, and the machine's load. A report, not a
test.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/lexery_bench BENCH_API_BROKER_URL=redis://127.0.0.1:6379/12 \
        .venv/bin/python bench/api_throughput.py [--seconds 10] [--rounds 5] [--clients 4] [--workers 2] [--json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.stats import percentile  # noqa: E402 (importable once the project is on the path)

DB = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/lexery_bench")
BROKER = os.environ.get("BENCH_API_BROKER_URL", "redis://127.0.0.1:6379/12")
ENV = {"DATABASE_URL": DB, "CELERY_BROKER_URL": BROKER, "CELERY_TASK_ALWAYS_EAGER": "false", "DEBUG": "false",
       "API_THROTTLE_RATE": "", "LOG_LEVEL": "WARNING", "DJANGO_SETTINGS_MODULE": "bench.api_settings",
       "LEXERY_VAR_DIR": os.environ.get("LEXERY_VAR_DIR") or tempfile.mkdtemp(prefix="lexery-bench-api-")}
os.environ.update(ENV)
QUESTION = "Скільки календарних днів триває щорічна основна відпустка?"
Call = Callable[[http.client.HTTPConnection], list[tuple[str, float]]]


def prepare() -> str:
    """Migrate the bench database, make sure the demo org and specialist exist, and return a fresh key."""
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    from tenancy.auth import api_key_create
    from tenancy.models import Org

    call_command("seed_demo", stdout=open(os.devnull, "w"))
    return api_key_create(org=Org.objects.get(slug="demo"), name="bench")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_gunicorn(port: int, workers: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([str(ROOT / ".venv/bin/gunicorn"), "lexery.wsgi", "--bind", f"127.0.0.1:{port}",
                             "--workers", str(workers), "--timeout", "60"], cwd=ROOT, env={**os.environ, **ENV},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise SystemExit("gunicorn did not answer /healthz within 60 s")


def request(conn: http.client.HTTPConnection, method: str, path: str, key: str, body: bytes | None = None,
            ok: int = 200) -> tuple[float, bytes]:
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    started = time.perf_counter()
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    if response.status != ok:
        raise RuntimeError(f"{method} {path}: {response.status} {data[:200]!r}")
    return time.perf_counter() - started, data


def bare(conn: http.client.HTTPConnection) -> list[tuple[str, float]]:
    return [("bare GET", request(conn, "GET", "/bench/bare", "-")[0])]


def keyed(key: str, run_id: str) -> Call:
    def call(conn: http.client.HTTPConnection) -> list[tuple[str, float]]:
        return [("keyed GET (key + 1 row)", request(conn, "GET", f"/bench/keyed/{run_id}", key)[0])]

    return call


def runs_post_get(key: str) -> Call:
    body = json.dumps({"question": QUESTION, "specialist": "demo"}).encode()

    def call(conn: http.client.HTTPConnection) -> list[tuple[str, float]]:
        posted, data = request(conn, "POST", "/api/v1/runs", key, body, ok=202)
        got, _ = request(conn, "GET", f"/api/v1/runs/{json.loads(data)['id']}", key)
        return [("POST /api/v1/runs", posted), ("GET /api/v1/runs/{id}", got)]

    return call


def load(port: int, call: Call, seconds: float, clients: int) -> dict[str, list[float]]:
    """``clients`` threads calling as fast as answers come for ``seconds``; latencies by request kind."""
    out: dict[str, list[float]] = {}
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while time.monotonic() < stop:
            done = call(conn)
            with lock:
                for kind, latency in done:
                    out.setdefault(kind, []).append(latency)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def summary(latencies: dict[str, list[float]], seconds: float) -> dict[str, dict[str, float]]:
    return {kind: {"requests": len(v), "rps": len(v) / seconds, "p50_ms": percentile(v, 0.5) * 1e3,
                   "p95_ms": percentile(v, 0.95) * 1e3, "p99_ms": percentile(v, 0.99) * 1e3}
            for kind, v in latencies.items()}


def flush_broker() -> None:
    import redis

    redis.Redis.from_url(BROKER).flushdb()  # the bench's own database only: the U1 messages nobody consumes


Summary = dict[str, dict[str, float]]


def measure(args: argparse.Namespace, key: str) -> tuple[Summary, Summary, Summary]:
    """The bare endpoint's, the keyed endpoint's and the API's numbers on the same gunicorn, in turns: each gets
    ``seconds`` in all, as ``rounds`` slices."""
    port = free_port()
    server = start_gunicorn(port, args.workers)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        _, data = request(conn, "POST", "/api/v1/runs", key, json.dumps({"question": QUESTION,
                                                                         "specialist": "demo"}).encode(), ok=202)
        loads = {"bare": bare, "keyed": keyed(key, json.loads(data)["id"]), "api": runs_post_get(key)}
        for call in loads.values():  # warm every worker's imports and connections
            load(port, call, 1.0, args.clients)
        slice_s = args.seconds / args.rounds
        latencies: dict[str, dict[str, list[float]]] = {name: {} for name in loads}
        for _ in range(args.rounds):
            for name, call in loads.items():
                for kind, values in load(port, call, slice_s, args.clients).items():
                    latencies[name].setdefault(kind, []).extend(values)
    finally:
        server.terminate()
        server.wait(timeout=30)
    bare_result, keyed_result, api_result = (summary(latencies[n], args.seconds) for n in loads)
    return bare_result, keyed_result, api_result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=5, help="turns each load takes; --seconds is split among them")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    key = prepare()
    flush_broker()
    try:
        bare_result, keyed_result, api_result = measure(args, key)
    finally:
        flush_broker()
    api_rps = sum(r["rps"] for r in api_result.values())
    bare_rps = bare_result["bare GET"]["rps"]
    keyed_rps = sum(r["rps"] for r in keyed_result.values())
    load1 = os.getloadavg()[0]
    if args.json:
        print(json.dumps({"bare": bare_result, "keyed": keyed_result, "api": api_result, "api_rps": api_rps,
                          "bare_rps": bare_rps, "keyed_rps": keyed_rps, "ratio": api_rps / bare_rps,
                          "ratio_keyed": api_rps / keyed_rps, "clients": args.clients, "workers": args.workers,
                          "seconds": args.seconds, "rounds": args.rounds, "load1": load1}, indent=2))
        return 0
    print(f"gunicorn {args.workers} sync workers, {args.clients} client threads, {args.seconds:.0f} s each in "
          f"{args.rounds} rounds, load {load1:.2f}")
    for kind, r in [*bare_result.items(), *keyed_result.items(), *api_result.items()]:
        print(f"  {kind:24} {r['rps']:7.1f} req/s  p50 {r['p50_ms']:6.1f}  p95 {r['p95_ms']:6.1f}  "
              f"p99 {r['p99_ms']:6.1f} ms")
    print(f"API (POST + GET) {api_rps:.1f} req/s against bare {bare_rps:.1f}: ratio {api_rps / bare_rps:.2f} "
          f"(goal >= 0.7); against keyed {keyed_rps:.1f}: ratio {api_rps / keyed_rps:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
