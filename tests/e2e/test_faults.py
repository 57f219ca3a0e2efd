"""Faults with real processes (issue 11): web, prefork stage workers and beat on Redis and the test database, and
the things production does to them — SIGKILL mid-stage, every process killed at once, the broker flushed or
unreachable, the database cutting the workers' connections, a stage past its hard limit, 200 runs at once.

Every run must end ``done`` (or ``failed`` with a reason where a bound says so); no (stage, attempt) recorded twice,
no event left ``running``, no ledger row twice. The spawned processes run with small limits (FAST) so the reaper
acts within seconds; each test has a hard timeout and stops every process it started, even when it fails.

Wall times on 2 cores shared with other work (load ~6): SIGKILL per stage ~100 s (each kill of a claimed attempt
waits for the hard limit before the attempt may be claimed again; ~75 s for each of its two variants, held and
claimed, on a quiet machine), kill-all ~40 s, flush ~27 s, pg_terminate ~25 s, broker down at POST ~21 s, hard limit
~31 s, 200 runs ~180 s (E2E_LOAD_RUNS sets the number; its bound grows with it)."""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import redis
from django.conf import settings as django_settings
from django.db import connection, transaction
from django.db.models import Avg, Count
from django.utils import timezone

from engine.dispatch import enqueue_stage
from engine.models import OutboxMessage
from engine.reaper import reap
from engine.specs import ALL_QUEUES, RETRIEVAL_QUEUE
from llm.models import CostLedgerEntry
from orch.policy import STAGES
from runs.models import Run, StageEvent
from tenancy.auth import api_key_create
from tests.support.broker import BROKER_URL, BrokerProxy, celery_broker, free_port, queued_tasks

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
APP = "lexery-faults"  # application_name of the spawned processes' database connections (pg_terminate_backend)
QUESTION = "Скільки календарних днів триває щорічна основна відпустка?"
# Walks all twelve stages: the Tax Code is in the catalog but not in the test index, so the gate sends U6.
ALL_STAGES_QUESTION = "Яка ставка податку на доходи фізичних осіб згідно з Податковим кодексом України?"
STAGE_QUEUES = [q for q in ALL_QUEUES if q != RETRIEVAL_QUEUE]
# The offline writer's sentence meaning is off here: a fresh worker's first answer loads e5 and embeds ~64
# sentences, seconds under this suite's load — past the 4 s soft limit these tests give every stage so the reaper
# acts within the test's bound (the tests are about the engine; tests/llm covers the writer, and the other e2e tests
# run it on real workers with the default limits).
FAST = {"STAGE_SOFT_TIME_LIMIT_S": "4", "STAGE_TIME_LIMIT_S": "5", "REAPER_GRACE_S": "1", "REAPER_INTERVAL_S": "1",
        "OUTBOX_SEND_GRACE_S": "1", "BROKER_VISIBILITY_TIMEOUT_S": "8", "API_THROTTLE_RATE": "100000/minute",
        "OFFLINE_WRITER_MEANING": "false"}
F = TypeVar("F", bound=Callable[..., Any])


def bounded(seconds: int) -> Callable[[F], F]:
    """The test's hard timeout: past it the test fails (and its fixtures stop every process) wherever it was."""
    def mark(fn: F) -> F:
        fn.hard_timeout_s = seconds  # type: ignore[attr-defined]  # a marker the fixture reads off the test function
        return fn
    return mark


@pytest.fixture(autouse=True)
def _hard_timeout(request: pytest.FixtureRequest) -> Iterator[None]:
    seconds = getattr(request.function, "hard_timeout_s", 120)

    def expire(*_: object) -> None:
        pytest.fail(f"hard timeout: {request.node.name} ran past {seconds}s", pytrace=False)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _database_url(role: str) -> str:
    s = connection.settings_dict
    return (f"postgres://{s['USER']}:{s['PASSWORD'] or ''}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/"
            f"{s['NAME']}?application_name={APP}-{role}")


def _web_port() -> int:
    """A free port of E2E_WEB_PORTS ("8150-8159") when set, else any free port."""
    span = os.environ.get("E2E_WEB_PORTS", "")
    if not span:
        return free_port()
    low, _, high = span.partition("-")
    for port in range(int(low), int(high or low) + 1):
        try:
            with socket.create_server(("127.0.0.1", port)):
                return port
        except OSError:
            continue
    raise RuntimeError(f"no free port in E2E_WEB_PORTS={span}")


class Proc:
    """One spawned process in its own process group: a kill reaches a prefork worker's children too."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], log: Path) -> None:
        self.name, self.args, self.env, self.log = name, args, env, log
        self.popen: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> Proc:
        with self.log.open("ab") as log:
            log.write(f"\n--- start {self.starts + 1} of {self.name} ---\n".encode())
            log.flush()
            self.popen = subprocess.Popen([sys.executable, *self.args], cwd=ROOT, env=self.env, stdout=log,
                                          stderr=subprocess.STDOUT, start_new_session=True)
        self.starts += 1
        return self

    @property
    def pid(self) -> int:
        assert self.popen is not None
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def children(self) -> set[int]:
        try:
            return {int(p) for p in Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()}
        except OSError:
            return set()

    def _signal_group(self, sig: int) -> None:
        if self.popen is None:
            return
        try:
            os.killpg(self.popen.pid, sig)
        except ProcessLookupError:  # the whole group is gone
            pass

    def kill(self) -> None:
        """SIGKILL of the process and every process of its group (a worker and its pool children)."""
        self._signal_group(signal.SIGKILL)
        if self.popen is not None:
            self.popen.wait(timeout=10)

    def terminate(self) -> None:
        self._signal_group(signal.SIGTERM)

    def stop(self, grace_s: float = 5) -> None:
        """SIGTERM (a worker's warm shutdown), then SIGKILL of whatever of the group is left after ``grace_s``."""
        if self.popen is None:
            return
        self.terminate()
        try:
            self.popen.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
        self._signal_group(signal.SIGKILL)  # the leader if it hung, an orphaned pool child
        self.popen.wait(timeout=10)

    def tail(self, chars: int = 2500) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return f"--- {self.name} ({self.log.name}) ---\n{text[-chars:]}"


class Cluster:
    """What make serve runs (web, a stage worker, the retrieval worker, beat) as separate processes on the test
    database and the suite's Redis database, with the engine's limits made small."""

    def __init__(self, logs: Path, api_key: str, **env: str) -> None:
        self.logs, self.api_key = logs, api_key
        self.env = {**os.environ, "CELERY_BROKER_URL": BROKER_URL, "LEXERY_VAR_DIR": str(django_settings.VAR_DIR),
                    "LOG_LEVEL": "WARNING", **FAST, **env}
        self.procs: list[Proc] = []
        self.base_url = ""

    def _proc(self, name: str, args: list[str], role: str, env: dict[str, str]) -> Proc:
        proc = Proc(name, args, {**self.env, "DATABASE_URL": _database_url(role), **env}, self.logs / f"{name}.log")
        self.procs.append(proc)
        return proc.start()

    def worker(self, name: str, queues: Iterable[str], **env: str) -> Proc:
        return self._proc(name, ["-m", "celery", "-A", "lexery", "worker", "--pool=prefork", "--concurrency=1",
                                 "-Q", ",".join(queues), "-n", f"{name}@%h", "--without-heartbeat",
                                 "--without-gossip", "--without-mingle", "-l", "WARNING"], "worker", env)

    def workers(self, **env: str) -> tuple[Proc, Proc]:
        """The Procfile's two workers: stages (every queue but retrieval) and retrieval (U4/U6/U7)."""
        return self.worker("stages", STAGE_QUEUES, **env), self.worker("retrieval", [RETRIEVAL_QUEUE], **env)

    def beat(self, **env: str) -> Proc:
        return self._proc("beat", ["-m", "celery", "-A", "lexery", "beat", "-l", "WARNING", "--schedule",
                                   str(self.logs / "celerybeat-schedule")], "beat", env)

    def web(self, port: int | None = None, **env: str) -> Proc:
        port = port or _web_port()
        proc = self._proc("web", ["manage.py", "runserver", f"127.0.0.1:{port}", "--noreload", "--skip-checks"],
                          "web", env)
        self.base_url = f"http://127.0.0.1:{port}"
        return proc

    def wait_web(self, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{self.base_url}/api/v1/runs/00000000-0000-0000-0000-000000000000", timeout=2)
                return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise AssertionError(f"web not answering after {timeout_s}s\n{self.logs_tail()}")

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, headers={"Authorization": f"Bearer {self.api_key}"},
                            timeout=30)

    def post_runs(self, n: int, question: str = QUESTION, threads: int = 1) -> list[str]:
        def post(_: int) -> str:
            with self.client() as client:
                answer = client.post("/api/v1/runs", json={"question": question, "specialist": "labour"})
            assert answer.status_code == 202, answer.text
            return str(answer.json()["id"])

        with ThreadPoolExecutor(threads) as pool:
            return list(pool.map(post, range(n)))

    def kill_all(self) -> None:
        for proc in self.procs:
            if proc.alive():
                proc.kill()

    def stop_all(self) -> None:
        for proc in self.procs:  # all at once, then wait for each
            proc.terminate()
        deadline = time.monotonic() + 5
        for proc in self.procs:
            proc.stop(grace_s=max(0.1, deadline - time.monotonic()))

    def logs_tail(self) -> str:
        seen = {p.name: p for p in self.procs}
        return "\n".join(p.tail() for p in seen.values())


@contextmanager
def fresh_cluster(tmp_path: Path, specialist: Any, **limits: str) -> Iterator[Cluster]:
    """A cluster on a flushed broker, stopped and flushed again however the test ends (PostgreSQL only)."""
    if connection.vendor != "postgresql":
        pytest.skip("the processes share the test database: run this suite on PostgreSQL (make test does)")
    broker = redis.Redis.from_url(BROKER_URL)
    broker.flushdb()
    made = Cluster(tmp_path, api_key_create(org=specialist.org), **limits)
    try:
        yield made
    finally:
        made.stop_all()
        broker.flushdb()


@pytest.fixture
def cluster(lldbi_index, release_qdrant, catalog, specialist, tmp_path) -> Iterator[Cluster]:
    with fresh_cluster(tmp_path, specialist) as made:
        yield made


def _terminal(run_ids: list[str]) -> dict[str, str]:
    rows = Run.objects.filter(pk__in=run_ids, status__in=Run.TERMINAL).values_list("pk", "status")
    return {str(pk): status for pk, status in rows}


def wait_ended(cluster: Cluster, run_ids: list[str], timeout_s: float) -> dict[str, str]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if len(ended := _terminal(run_ids)) == len(run_ids):
            return ended
        time.sleep(0.3)
    stuck = list(Run.objects.filter(pk__in=run_ids).exclude(status__in=Run.TERMINAL)
                 .values("pk", "status", "current_stage", "updated_at"))
    outbox = list(OutboxMessage.objects.filter(run_id__in=[s["pk"] for s in stuck])
                  .values("run_id", "stage", "attempt", "sent_at", "sends", "last_error"))
    raise AssertionError(f"{len(stuck)} of {len(run_ids)} runs not ended after {timeout_s}s: {stuck[:5]}\n"
                         f"outbox: {outbox[-10:]}\n{cluster.logs_tail()}")


def assert_clean(run_ids: list[str]) -> None:
    """No (stage, attempt) twice, no event left running, attempts counted without gaps, no ledger row twice."""
    events = list(StageEvent.objects.filter(run_id__in=run_ids).values_list("run_id", "stage", "attempt",
                                                                           "outcome"))
    twice = [k for k, n in Counter((r, s, a) for r, s, a, _ in events).items() if n > 1]
    assert not twice, f"stage attempts recorded twice: {twice}"
    running = [(r, s, a) for r, s, a, o in events if o == StageEvent.Outcome.RUNNING]
    assert not running, f"events left running: {running}"
    attempts: dict[tuple[str, str], list[int]] = {}
    for r, s, a, _ in events:
        attempts.setdefault((str(r), s), []).append(a)
    gaps = {k: v for k, v in attempts.items() if sorted(v) != list(range(1, len(v) + 1))}
    assert not gaps, f"attempt numbers with gaps: {gaps}"
    keys = Counter(CostLedgerEntry.objects.filter(run_id__in=run_ids).values_list("idempotency_key", flat=True))
    assert [k for k, n in keys.items() if n > 1] == []


def assert_all_done(ended: dict[str, str]) -> None:
    failed = {k: v for k, v in ended.items() if v != Run.Status.DONE}
    errors = dict(Run.objects.filter(pk__in=list(failed)).values_list("pk", "error"))
    assert not failed, f"{len(failed)} of {len(ended)} runs did not end done: {errors}"


def _running_events(run_ids: list[str]) -> int:
    return StageEvent.objects.filter(run_id__in=run_ids, outcome=StageEvent.Outcome.RUNNING).count()


def wait_in_flight(cluster: Cluster, run_ids: list[str], timeout_s: float = 60) -> int:
    """Until some runs hold a stage and most have not ended: the moment to strike. The runs still active."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ended = len(_terminal(run_ids))
        if _running_events(run_ids) and ended <= len(run_ids) // 4:
            return len(run_ids) - ended
        time.sleep(0.05)
    raise AssertionError(f"runs never in flight\n{cluster.logs_tail()}")


# --- 1. a worker killed in the middle of every stage ------------------------------------------------------------

@bounded(240)
@pytest.mark.parametrize("held", ["true", "false"])
def test_a_worker_killed_in_the_middle_of_every_stage_the_run_still_ends_done(cluster, held):
    """Each stage's worker is killed in its injected sleep: on the held path (engine/held.py: computed before any
    claim, no event yet) as on the claimed one (``ENGINE_HELD_STAGES=false``: the event ``running``). The worker's
    own log line says when a stage sleeps; the stage must sleep again, in the restarted worker, and finish once."""
    stages, retrieval = cluster.workers(ENGINE_FAULT_DELAYS="*=0.5", ENGINE_HELD_STAGES=held)
    cluster.beat()
    cluster.web()
    cluster.wait_web()
    [run_id] = cluster.post_runs(1, ALL_STAGES_QUESTION)
    killed: set[str] = set()
    deadline = time.monotonic() + 200
    while not _terminal([run_id]) and time.monotonic() < deadline:
        for owner in (stages, retrieval):
            sleeping = _sleeps(owner, run_id)
            if sleeping and sleeping[-1] not in killed:
                owner.kill()  # in the injected sleep: nothing of the stage persisted
                killed.add(sleeping[-1])
                owner.start()
        time.sleep(0.05)

    [status] = wait_ended(cluster, [run_id], 30).values()
    walk = list(StageEvent.objects.filter(run_id=run_id).order_by("step").values_list("stage", flat=True))
    assert status == Run.Status.DONE, (Run.objects.get(pk=run_id).error, walk, cluster.logs_tail())
    assert killed == set(STAGES) == set(walk), (killed, walk)
    assert_clean([run_id])
    slept = Counter(_sleeps(stages, run_id) + _sleeps(retrieval, run_id))
    assert all(slept[stage] > 1 for stage in STAGES), slept  # each killed stage ran again after its kill
    assert CostLedgerEntry.objects.filter(run_id=run_id).exists()


def _sleeps(worker: Proc, run_id: str) -> list[str]:
    """The stages of ``run_id`` whose injected sleep ``worker`` logged, in order (engine/stage_env.injected_delay)."""
    text = worker.log.read_text(errors="replace") if worker.log.exists() else ""
    found = []
    for line in text.splitlines():
        if "fault injection: stage sleeps" in line and run_id in line:
            try:
                found.append(str(json.loads(line)["stage"]))
            except (ValueError, KeyError):
                continue  # a line cut by the kill
    return found


# --- 2. every process killed at once -----------------------------------------------------------------------------

@bounded(180)
def test_every_process_killed_with_runs_in_flight_and_restarted_every_run_ends_done(cluster):
    cluster.workers(ENGINE_FAULT_DELAYS="*=0.1")
    cluster.beat()
    web = cluster.web()
    cluster.wait_web()
    run_ids = cluster.post_runs(8, threads=4)
    in_flight = wait_in_flight(cluster, run_ids)

    cluster.kill_all()
    assert not any(p.alive() for p in cluster.procs)
    for proc in cluster.procs:
        proc.start()

    ended = wait_ended(cluster, run_ids, 120)
    assert_all_done(ended)
    assert_clean(run_ids)
    assert in_flight >= 6 and web.starts == 2


# --- 3. the broker's database flushed ----------------------------------------------------------------------------

@bounded(150)
def test_the_broker_flushed_mid_run_every_run_ends_done(cluster):
    cluster.workers(ENGINE_FAULT_DELAYS="*=0.1")
    cluster.beat()
    cluster.web()
    cluster.wait_web()
    run_ids = cluster.post_runs(8, threads=4)
    wait_in_flight(cluster, run_ids)

    broker = redis.Redis.from_url(BROKER_URL)
    broker.flushdb()  # queued and unacknowledged messages gone
    time.sleep(1.0)
    broker.flushdb()

    ended = wait_ended(cluster, run_ids, 120)
    assert_all_done(ended)
    assert_clean(run_ids)
    resent = OutboxMessage.objects.filter(run_id__in=run_ids, sends__gt=1).count()
    assert resent > 0  # the reaper did it: nothing else knew the messages were gone


# --- 4. the database cuts the workers' connections ---------------------------------------------------------------

def _terminate_worker_connections() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s "
                       "AND pid <> pg_backend_pid() AND application_name = %s",
                       [connection.settings_dict["NAME"], f"{APP}-worker"])
        return int(cursor.fetchone()[0])


@bounded(150)
def test_the_workers_database_connections_terminated_mid_run_every_run_ends_done(cluster):
    cluster.workers(ENGINE_FAULT_DELAYS="*=0.1")
    cluster.beat()
    cluster.web()
    cluster.wait_web()
    run_ids = cluster.post_runs(8, threads=4)
    wait_in_flight(cluster, run_ids)

    terminated = 0
    for _ in range(3):
        terminated += _terminate_worker_connections()
        time.sleep(1.0)

    ended = wait_ended(cluster, run_ids, 120)
    # No bound should be reached here: three cuts are fewer than the transient-retry and redelivery bounds.
    assert_all_done(ended)
    assert_clean(run_ids)
    assert terminated >= 2, terminated


# --- 5. the broker down when the web process sends U1, and when a worker sends the next stage ---------------------

@bounded(150)
def test_post_with_the_broker_down_answers_202_and_the_run_starts_when_it_is_back(cluster):
    proxy = BrokerProxy().open()
    try:
        cluster.workers()
        cluster.beat(CELERY_BROKER_URL=proxy.url)  # beat's reap ticks go through the proxy too
        cluster.web(CELERY_BROKER_URL=proxy.url)
        cluster.wait_web()
        [warm] = cluster.post_runs(1)  # the web process has a broker connection in its pool before it goes away
        wait_ended(cluster, [warm], 60)

        proxy.close()
        time.sleep(1.5)  # reap ticks sent before the close have run
        started = time.monotonic()
        with cluster.client() as client:
            answer = client.post("/api/v1/runs", json={"question": QUESTION, "specialist": "labour"})
        post_s = time.monotonic() - started

        assert answer.status_code == 202, answer.text  # never 500: the decision is stored, the send comes later
        run_id = answer.json()["id"]
        assert post_s < 10, post_s
        assert Run.objects.count() == 2  # the warm-up run and this one: no duplicate
        time.sleep(4)  # longer than OUTBOX_SEND_GRACE_S + REAPER_INTERVAL_S: nothing sends it while down
        row = OutboxMessage.objects.get(run_id=run_id)
        assert (row.sent_at, row.sends) == (None, 0) and "onnection" in row.last_error, row.last_error
        assert Run.objects.get(pk=run_id).status == Run.Status.QUEUED

        proxy.open()
        ended = wait_ended(cluster, [run_id], 60)
    finally:
        proxy.close()
    assert_all_done(ended)
    assert_clean([run_id])
    row.refresh_from_db()
    assert row.sends == 1 and row.sent_at is not None and row.last_error == ""  # sent once, by the reaper
    assert Run.objects.count() == 2


@bounded(60)
def test_a_next_stage_send_with_the_broker_down_stays_unsent_until_the_reaper_sends_it(broker, specialist):
    run = Run.objects.create(org=specialist.org, specialist=specialist, question=QUESTION,
                             status=Run.Status.RUNNING, current_stage="U1")
    with BrokerProxy() as proxy, celery_broker(proxy.url):
        proxy.close()
        with transaction.atomic():  # the shell persists U1 and decides U2 in one transaction
            enqueue_stage(str(run.pk), "U2", 1)
        row = OutboxMessage.objects.get(run=run, stage="U2", attempt=1)
        assert row.sent_at is None and row.sends == 0 and "refused" in row.last_error, row.last_error
        later = timezone.now() + timedelta(seconds=django_settings.OUTBOX_SEND_GRACE_S + 1)
        assert reap(later).sent == 0  # still down: still unsent
        assert queued_tasks(broker, "stages") == []

        proxy.open()
        report = reap(later)

    assert report.sent == 1
    row.refresh_from_db()
    assert row.sent_at is not None and row.sends == 1 and row.last_error == ""
    assert queued_tasks(broker, "stages") == [{"task": "engine.stage.U2", "args": [str(run.pk), "U2", 1]}]


# --- 6. 200 runs at once --------------------------------------------------------------------------------------

@bounded(int(os.environ.get("E2E_LOAD_RUNS", "200")) * 2 + 120)
def test_200_runs_at_once_on_two_workers_all_end_done(cluster, capsys):
    n = int(os.environ.get("E2E_LOAD_RUNS", "200"))
    cluster.workers()
    cluster.beat()
    cluster.web()
    cluster.wait_web()
    started = time.monotonic()
    run_ids = cluster.post_runs(n, threads=8)
    posted_s = time.monotonic() - started

    ended = wait_ended(cluster, run_ids, 60 + 2 * n)
    total_s = time.monotonic() - started
    walls = sorted((finished - created).total_seconds() for created, finished in
                   Run.objects.filter(pk__in=run_ids).values_list("created_at", "finished_at") if finished)
    events = StageEvent.objects.filter(run_id__in=run_ids)
    inside = events.aggregate(n=Count("id"), stage_ms=Avg("duration_ms"), compute_ms=Avg("compute_ms"))
    with capsys.disabled():
        print(f"\n{n} runs on 2 prefork workers (concurrency 1): posted in {posted_s:.1f}s, all ended in "
              f"{total_s:.1f}s; run wall time p50 {statistics.median(walls):.2f}s "
              f"p95 {walls[int(0.95 * (len(walls) - 1))]:.2f}s; {inside['n']} stage events, mean "
              f"{inside['stage_ms'] or 0:.0f} ms in the shell, {inside['compute_ms'] or 0:.0f} ms in stage code")
    assert_all_done(ended)
    assert_clean(run_ids)
    assert not events.filter(deliveries__gt=1).exists(), "a stage attempt was delivered twice under load"
    assert not OutboxMessage.objects.filter(run_id__in=run_ids, sends__gt=1).exists(), "re-sent under load"


# --- 7. a stage past its hard limit every time ---------------------------------------------------------------

@bounded(120)
def test_a_stage_past_its_hard_limit_every_time_fails_the_run_on_the_redelivery_bound(cluster):
    # no soft limit (0): with the suite's 4 s soft limit above the 3 s hard one, the pool raised the soft limit in the
    # stage first and killed it just after; on a busy machine the stage handled the soft limit before the kill and
    # failed with another reason (seen once under load). A soft limit far above the hard one (60 s) is no fix: the
    # pool then never kills at the hard limit (the run finished its 30 s stage and ended done).
    stages, _ = cluster.workers(ENGINE_FAULT_DELAYS="U8=30", STAGE_TIME_LIMIT_S="3", STAGE_SOFT_TIME_LIMIT_S="0",
                                STAGE_MAX_REDELIVERIES="2")
    cluster.beat()
    cluster.web()
    cluster.wait_web()
    [run_id] = cluster.post_runs(1)
    while not (children := stages.children()):
        time.sleep(0.1)

    [status] = wait_ended(cluster, [run_id], 90).values()

    run = Run.objects.get(pk=run_id)
    assert status == Run.Status.FAILED, (run.error, cluster.logs_tail())
    assert "U8" in run.error and "STAGE_MAX_REDELIVERIES=2" in run.error, run.error
    assert_clean([run_id])
    u8 = StageEvent.objects.get(run_id=run_id, stage="U8")
    assert u8.outcome == StageEvent.Outcome.ERROR and 2 <= u8.deliveries <= 3, (u8.deliveries, u8.reason)
    assert stages.alive() and stages.children() and not (stages.children() & children)  # the pool replaced it
    assert "Hard time limit (3s) exceeded" in stages.log.read_text(errors="replace")

