"""/healthz and /readyz in this process, against the real PostgreSQL, Redis, the local search store and a real S3 API
(moto_server); the dependency that is down is a closed port or a server that never answers."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from django.test import Client

from lexery.settings import s3_client_config
from ops import readiness
from tests.support.loopback import closed_port, moto_server, stalled_server

BROKER_URL = os.environ.get("E2E_BROKER_URL", "redis://127.0.0.1:6379/14")
BUCKET = "lexery-readyz-test"


def readyz(**headers: str) -> tuple[int, dict[str, Any]]:
    response = Client().get("/readyz", headers=headers)
    return response.status_code, json.loads(response.content)


@pytest.fixture
def with_broker(settings: Any) -> Any:
    settings.CELERY_BROKER_URL, settings.CELERY_TASK_ALWAYS_EAGER = BROKER_URL, False
    return settings


def test_healthz_answers_without_the_database() -> None:
    # given no database access at all (pytest-django refuses any query in a test without the db fixture)
    # when
    response = Client().get("/healthz")
    # then
    assert response.status_code == 200
    assert json.loads(response.content) == {"status": "alive"}
    assert response["Cache-Control"].startswith("max-age=0")


@pytest.mark.django_db
def test_readyz_is_ready_with_the_database_and_the_broker_up(with_broker: Any) -> None:
    status, body = readyz()
    assert status == 200, body
    assert body["status"] == "ready" and body["down"] == []
    assert body["checks"]["database"] == {"state": "ok", "reason": f"{_vendor()} answers"}
    assert body["checks"]["broker"] == {"state": "ok", "reason": "redis answers"}
    assert set(body["checks"]) == {"database", "broker", "search", "snippets"}


def _vendor() -> str:
    from django.db import connection

    return connection.vendor


@pytest.mark.django_db
def test_without_a_broker_the_broker_is_off_not_down(settings: Any) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    status, body = readyz()
    assert status == 200
    assert body["checks"]["broker"]["state"] == "off"


@pytest.mark.django_db
def test_a_broker_on_a_closed_port_makes_readyz_503_naming_it(with_broker: Any) -> None:
    # given
    with_broker.CELERY_BROKER_URL = f"redis://127.0.0.1:{closed_port()}/0"
    # when
    status, body = readyz()
    # then
    assert status == 503
    assert body["status"] == "not_ready" and body["down"] == ["broker"]
    assert body["checks"]["broker"] == {"state": "down", "reason": "the broker did not answer"}
    assert body["checks"]["database"]["state"] == "ok"
    text = json.dumps(body).lower()
    assert "refused" not in text and "error" not in text and "127.0.0.1" not in text  # nothing of the exception


@pytest.mark.django_db
def test_a_broker_that_never_answers_is_down_within_its_timeout(with_broker: Any) -> None:
    with stalled_server() as port:
        with_broker.CELERY_BROKER_URL = f"redis://127.0.0.1:{port}/0"
        with_broker.READYZ_BROKER_TIMEOUT_S = 0.5
        started = time.monotonic()
        status, body = readyz()
        took = time.monotonic() - started
    assert status == 503 and body["down"] == ["broker"]
    assert took < 2.5, f"readyz took {took:.1f} s against a 0.5 s bound"


def test_a_check_that_never_returns_is_cut_off_at_its_bound() -> None:
    # given a probe that ignores every timeout
    def hangs(timeout_s: float) -> readiness.Check:
        time.sleep(5)
        return readiness.Check(readiness.OK, "late")

    probes = [readiness.Probe("search", hangs, 0.3),
              readiness.Probe("snippets", lambda t: readiness.Check(readiness.OK, "fine"), 1.0)]
    # when
    started = time.monotonic()
    checks = readiness.run_probes(probes)
    # then
    assert time.monotonic() - started < 1.5
    assert checks["search"] == readiness.Check(readiness.DOWN, "the search engine did not answer within 0.3 s")
    assert checks["snippets"] == readiness.Check(readiness.OK, "fine")


@pytest.mark.django_db
def test_a_qdrant_server_on_a_closed_port_is_down(settings: Any) -> None:
    settings.QDRANT_URL = f"http://127.0.0.1:{closed_port()}"
    status, body = readyz()
    assert status == 503 and body["down"] == ["search"]
    assert body["checks"]["search"] == {"state": "down", "reason": "the search engine did not answer"}


@pytest.mark.django_db
def test_a_qdrant_server_that_never_answers_is_down_within_its_timeout(settings: Any) -> None:
    with stalled_server() as port:
        settings.QDRANT_URL, settings.READYZ_SEARCH_TIMEOUT_S = f"http://127.0.0.1:{port}", 1.0
        started = time.monotonic()
        status, body = readyz()
        took = time.monotonic() - started
    assert status == 503 and body["down"] == ["search"]
    assert took < 3.0


@pytest.mark.django_db
def test_the_local_store_is_read_without_being_opened(lldbi_index: Any, release_qdrant: None,
                                                      settings: Any) -> None:
    # given an ingested local store searched by qdrant-client's local mode, closed in this process
    from knowledge import index

    settings.LLDBI_SEARCH = "qdrant"
    assert index.held_client() is None
    # when
    status, body = readyz()
    # then
    assert status == 200
    assert body["checks"]["search"] == {"state": "ok",
                                        "reason": "local store readable; collection lldbi_chunks present"}
    assert index.held_client() is None  # readiness did not take the store


@pytest.mark.django_db
def test_a_collection_not_built_yet_is_a_warning_not_a_failure(settings: Any, tmp_path: Path) -> None:
    settings.QDRANT_PATH, settings.LLDBI_SEARCH = tmp_path / "qdrant-empty", "qdrant"
    status, body = readyz()
    assert status == 200
    assert body["checks"]["search"] == {"state": "warn",
                                        "reason": "local store empty: nothing ingested yet (ingest_laws)"}


@pytest.mark.django_db
def test_the_search_shard_is_checked_by_its_manifest(lldbi_index: Any, settings: Any, tmp_path: Path) -> None:
    # given the shards the embedded engine searches (the default without QDRANT_URL)
    from knowledge import edge, index

    edge.build_shard(index.get_client(), settings.LLDBI_COLLECTION, index.CHUNK_KEYWORD_FIELDS)
    status, body = readyz()
    assert status == 200 and body["checks"]["search"]["state"] == "ok"
    assert body["checks"]["search"]["reason"].startswith("search shard of lldbi_chunks present (")
    # when there is none (a fresh state directory): a warning that says what builds one
    settings.LLDBI_SHARDS_DIR = tmp_path / "no-shards"
    status, body = readyz()
    assert status == 200 and body["checks"]["search"] == {
        "state": "warn", "reason": "no search shard of lldbi_chunks yet (ingest_laws or build_search_shards)"}


# --- the snippet storage on S3 ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with moto_server(tmp_path_factory.mktemp("moto") / "moto.log") as endpoint:
        yield endpoint


def s3_snippets(settings: Any, endpoint: str, bucket: str = BUCKET) -> None:
    settings.STORAGES = {**settings.STORAGES, "snippets": {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {"bucket_name": bucket, "endpoint_url": endpoint, "region_name": "auto",
                    "addressing_style": "path", "client_config": s3_client_config(
                        connect_timeout_s=1, read_timeout_s=1, max_attempts=1, addressing_style="path")}}}


@pytest.fixture
def s3_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")


@pytest.mark.django_db
def test_an_s3_bucket_that_answers_is_ok(settings: Any, s3_endpoint: str, s3_credentials: None) -> None:
    boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1").create_bucket(Bucket=BUCKET)
    s3_snippets(settings, s3_endpoint)
    status, body = readyz()
    assert status == 200, body
    assert body["checks"]["snippets"] == {"state": "ok", "reason": f"bucket {BUCKET} answers"}


@pytest.mark.django_db
def test_a_missing_bucket_is_down(settings: Any, s3_endpoint: str, s3_credentials: None) -> None:
    s3_snippets(settings, s3_endpoint, bucket="no-such-bucket")
    status, body = readyz()
    assert status == 503 and body["down"] == ["snippets"]
    assert body["checks"]["snippets"] == {"state": "down", "reason": "the snippet storage did not answer"}


@pytest.mark.django_db
def test_an_s3_endpoint_that_never_answers_is_down_within_its_timeout(settings: Any, s3_credentials: None) -> None:
    with stalled_server() as port:
        s3_snippets(settings, f"http://127.0.0.1:{port}")
        settings.READYZ_STORAGE_TIMEOUT_S = 1.0
        started = time.monotonic()
        status, body = readyz()
        took = time.monotonic() - started
    assert status == 503 and body["down"] == ["snippets"]
    assert took < 3.0


@pytest.mark.django_db
def test_readyz_needs_no_key_and_is_not_in_the_api_schema(with_broker: Any) -> None:
    assert Client().get("/readyz").status_code == 200  # no Authorization header
    schema = Client().get("/api/schema/", headers={"Accept": "application/json"}).content.decode()
    assert "/readyz" not in schema and "/healthz" not in schema and "/metrics" not in schema
