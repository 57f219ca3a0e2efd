"""Production path end to end: a real Celery worker process on the Redis broker runs a question against
PostgreSQL, while this process plays the web side (HTTP API, never touching Qdrant)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
from django.conf import settings as django_settings
from django.db import connection

from engine.specs import ALL_QUEUES
from tenancy.auth import api_key_create
from tests.factories import org_create
from tests.support.broker import BROKER_URL
from tests.support.loopback import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
POLL_TIMEOUT_S = 180


def _database_url() -> str:
    s = connection.settings_dict
    return f"postgres://{s['USER']}:{s['PASSWORD'] or ''}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def _spawn(args: list[str], env: dict[str, str], log_name: str) -> subprocess.Popen[bytes]:
    log = (Path(django_settings.VAR_DIR) / log_name).open("wb")
    return subprocess.Popen([sys.executable, *args], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture
def production(lldbi_index, release_qdrant) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A web process and a worker process in production configuration, sharing the test database."""
    if connection.vendor != "postgresql":
        pytest.skip("the processes share the test database: run this suite on PostgreSQL (make test does)")
    redis.Redis.from_url(BROKER_URL).flushdb()
    env = {**os.environ, "DATABASE_URL": _database_url(), "CELERY_BROKER_URL": BROKER_URL,
           "LEXERY_VAR_DIR": str(django_settings.VAR_DIR), "LOG_LEVEL": "WARNING"}
    worker = _spawn(["-m", "celery", "-A", "lexery", "worker", "--pool=solo", "-Q", ",".join(ALL_QUEUES),
                     "--without-heartbeat", "--without-gossip", "--without-mingle", "-l", "WARNING"],
                    env, "e2e-worker.log")
    port = free_port()
    web = _spawn(["manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--skip-checks"], env, "e2e-web.log")
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # ready: the database, the broker, the search store and snippets answer
        try:
            if httpx.get(f"{base}/readyz", timeout=5).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    try:
        yield base, worker
    finally:
        _stop(web)
        _stop(worker)


def _logs() -> str:
    return "\n".join((Path(django_settings.VAR_DIR) / n).read_text(errors="replace")[-3000:]
                     for n in ("e2e-worker.log", "e2e-web.log"))


def _poll(client: httpx.Client, run_id: str) -> dict:
    deadline = time.monotonic() + POLL_TIMEOUT_S
    body: dict = {}
    while time.monotonic() < deadline:
        body = client.get(f"/api/v1/runs/{run_id}").json()
        if body["status"] in {"done", "failed", "cancelled", "awaiting_clarification"}:
            return body
        time.sleep(0.25)
    raise AssertionError(f"run {run_id} not finished after {POLL_TIMEOUT_S}s: {body}\n{_logs()}")


def test_a_worker_on_redis_answers_over_http_with_the_expected_citation(production, org, specialist, catalog):
    base, worker = production
    key = api_key_create(org=org)
    client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30)
    created = client.post("/api/v1/runs", json={"question": "Скільки календарних днів триває щорічна основна "
                                                            "відпустка?", "specialist": "labour"})
    assert created.status_code == 202, created.text

    run = _poll(client, created.json()["id"])

    assert run["status"] == "done", (run, _logs())
    refs = {c["article_ref"] for c in run["answer"]["citations"]}
    assert refs & {"КЗпП ст. 75", "Закон «Про відпустки» ст. 6"}
    events = client.get(f"/api/v1/runs/{run['id']}/events").json()["events"]
    stages = [e["stage"] for e in events]
    assert stages[:5] == ["U1", "U2", "U3", "U4", "U5"] and stages[-6:] == ["U7", "U8", "U9", "U10", "U11", "U12"]
    assert [e["step"] for e in events] == sorted(e["step"] for e in events)
    stranger = httpx.Client(base_url=base, timeout=30,
                            headers={"Authorization": f"Bearer {api_key_create(org=org_create('stranger'))}"})
    assert stranger.get(f"/api/v1/runs/{run['id']}").status_code == 404
    assert worker.poll() is None  # the worker is still alive: nothing crashed it
