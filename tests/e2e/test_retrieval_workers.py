"""Several retrieval workers on one machine (issue 15): two retrieval worker processes beside a stage worker and the
web process, on Redis and the test database. A user's document is uploaded once (indexed into its own Qdrant Edge
shard by whichever retrieval worker takes the task); then runs asking about it are served by both retrieval workers
at once, each opening the same shards read-only — every run done, every answer quoting the document as the user's
material and citing law only. With the local-path Qdrant this needed one retrieval process: a second could not open
the store."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from celery import current_app

from engine.specs import RETRIEVAL_QUEUE
from tests.e2e.test_faults import STAGE_QUEUES, Cluster, _hard_timeout, bounded, fresh_cluster  # noqa: F401  (a fixture)
from tests.support.broker import BROKER_URL, celery_broker

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CONTRACT = ("Договір оренди квартири № 7.\nОрендар сплачує орендну плату щомісяця до п'ятого числа.\n"
            "За прострочення оплати орендар сплачує штраф у розмірі 5 відсотків від суми боргу за кожен день.\n"
            "Договір діє дванадцять місяців.")
QUESTION = "Що в моєму договорі сказано про штраф за прострочення оплати?"
RUNS = 8  # a batch: both workers take U7 tasks when both are warm (each holds one unacknowledged task: prefetch 1)
MAX_BATCHES = 3
POLL_TIMEOUT_S = 240
# The engine's own limits, not test_faults' small ones: a worker's first U4 loads the embedder, its first U10 too
# (the offline writer's sentence meaning, on as by default).
LIMITS = {"STAGE_SOFT_TIME_LIMIT_S": "60", "STAGE_TIME_LIMIT_S": "70", "BROKER_VISIBILITY_TIMEOUT_S": "190",
          "REAPER_GRACE_S": "30", "OFFLINE_WRITER_MEANING": "true"}


@pytest.fixture
def two_retrieval_workers(lldbi_index, release_qdrant, catalog, specialist, tmp_path) -> Iterator[Cluster]:
    with fresh_cluster(tmp_path, specialist, **LIMITS) as made:
        made.worker("stages", STAGE_QUEUES)
        made.worker("retrieval1", [RETRIEVAL_QUEUE])
        made.worker("retrieval2", [RETRIEVAL_QUEUE])
        made.web()
        made.wait_web()
        yield made


def _wait(client: httpx.Client, path: str, done: set[str], logs: str = "") -> dict[str, Any]:
    deadline = time.monotonic() + POLL_TIMEOUT_S
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        body = client.get(path).json()
        if body["status"] in done:
            return body
        time.sleep(0.25)
    raise AssertionError(f"{path} not finished after {POLL_TIMEOUT_S}s: {body}\n{logs}")


def _tasks_served(workers: list[str]) -> dict[str, dict[str, int]]:
    """What each worker has run, by task name, as it reports over the broker (celery inspect stats)."""
    with celery_broker(BROKER_URL):
        stats = current_app.control.inspect(timeout=5).stats() or {}
    return {w: dict(s.get("total", {})) for name, s in stats.items() for w in workers if name.startswith(f"{w}@")}


@bounded(420)
def test_two_retrieval_workers_serve_runs_that_search_the_users_document(two_retrieval_workers: Cluster) -> None:
    cluster = two_retrieval_workers
    client = cluster.client()
    uploaded = client.post("/api/v1/documents", data={"user_ref": "u1"},
                           files={"file": ("договір.txt", CONTRACT.encode(), "text/plain")})
    assert uploaded.status_code == 202, uploaded.text
    document = _wait(client, f"/api/v1/documents/{uploaded.json()['id']}", {"ready", "failed"}, cluster.logs_tail())
    assert document["status"] == "ready", document

    def post(_: int) -> str:
        with cluster.client() as c:
            created = c.post("/api/v1/runs", json={"question": QUESTION, "specialist": "labour", "user_ref": "u1"})
        assert created.status_code == 202, created.text
        return str(created.json()["id"])

    # Runs in batches until both workers have searched the user's document: which worker takes a task is the
    # broker's choice, and a worker still opening its model for its first task can see a warm one take a whole batch.
    posted = 0
    served: dict[str, dict[str, int]] = {}
    for _ in range(MAX_BATCHES):
        with ThreadPoolExecutor(4) as pool:
            run_ids = list(pool.map(post, range(RUNS)))
        posted += len(run_ids)
        runs = [_wait(client, f"/api/v1/runs/{i}", {"done", "failed", "cancelled", "awaiting_clarification"},
                      cluster.logs_tail()) for i in run_ids]
        for run in runs:
            assert run["status"] == "done", (run, cluster.logs_tail())
            docs = [e for e in run["evidence"] if e["source"] == "doc"]
            assert docs and docs[0]["label"] == "doc:договір.txt#1" and docs[0]["article_ref"] is None, run["evidence"]
            assert "штраф у розмірі 5 відсотків" in run["answer"]["text"]
            assert all(c["act_nreg"] for c in run["answer"]["citations"])  # the document never poses as law
        served = _tasks_served(["retrieval1", "retrieval2"])
        if len(served) == 2 and all(t.get("engine.stage.U7", 0) > 0 for t in served.values()):
            break
    assert set(served) == {"retrieval1", "retrieval2"}, served
    for worker, totals in served.items():
        assert totals.get("engine.stage.U7", 0) > 0, (worker, served)  # each searched the user's document
    assert sum(t.get("engine.stage.U7", 0) for t in served.values()) == posted
    assert all(p.alive() for p in cluster.procs)
