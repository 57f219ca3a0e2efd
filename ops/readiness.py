"""Readiness: can this process serve? Each dependency is asked once, under its own bound, all at the same time.

A check returns a state and a short reason of ours: ``ok``; ``warn`` (it answers, but something an operator
should know, e.g. nothing ingested yet); ``down`` (it does not answer: the probe says 503); ``off`` (not used in
this configuration). The exception itself goes to the log, never into the body: the endpoint is unauthenticated.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connections

logger = logging.getLogger(__name__)

OK, WARN, DOWN, OFF = "ok", "warn", "down", "off"


@dataclass(frozen=True)
class Check:
    state: str
    reason: str


@dataclass(frozen=True)
class Probe:
    name: str
    run: Callable[[float], Check]  # given its timeout in seconds
    timeout_s: float


# --- the database ----------------------------------------------------------------------------------------------
def check_database(timeout_s: float) -> Check:
    """``SELECT 1`` on a connection of its own (the request's own connection is left alone), opened with a
    connect timeout so a blackholed database does not hold the thread for the OS's two minutes."""
    conn = connections.create_connection("default")
    vendor = conn.vendor
    options = dict(conn.settings_dict.get("OPTIONS") or {})
    if vendor == "postgresql":
        options["connect_timeout"] = max(1, round(timeout_s))  # libpq takes whole seconds
    elif vendor == "sqlite":
        options["timeout"] = timeout_s
    conn.settings_dict = {**conn.settings_dict, "OPTIONS": options}
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    finally:
        conn.close()
    return Check(OK, f"{vendor} answers")


# --- the broker ------------------------------------------------------------------------------------------------
def broker_url() -> str:
    """The configured broker, or empty when tasks run in-process (no broker configured, or forced eager)."""
    url = str(settings.CELERY_BROKER_URL or "")
    if settings.CELERY_TASK_ALWAYS_EAGER or url.startswith("memory://"):
        return ""
    return url


def check_broker(timeout_s: float) -> Check:
    url = broker_url()
    if not url:
        return Check(OFF, "no broker: tasks run inside this process")
    if url.startswith(("redis://", "rediss://", "unix://")):
        import redis

        client = redis.Redis.from_url(url, socket_connect_timeout=timeout_s, socket_timeout=timeout_s)
        try:
            client.ping()
        finally:
            client.close()
        return Check(OK, "redis answers")
    from kombu import Connection

    with Connection(url, connect_timeout=timeout_s) as conn:
        conn.ensure_connection(max_retries=1, timeout=timeout_s)
    return Check(OK, "broker answers")


# --- the search engine -----------------------------------------------------------------------------------------
def check_search(timeout_s: float) -> Check:
    from knowledge import edge

    collection = settings.LLDBI_COLLECTION
    if edge.search_backend() == "edge":
        return _check_shard(collection)
    if settings.QDRANT_URL:
        from qdrant_client import QdrantClient

        client = QdrantClient(url=settings.QDRANT_URL, api_key=settings.QDRANT_API_KEY or None,
                              timeout=max(1, round(timeout_s)), check_compatibility=False)
        try:
            exists = client.collection_exists(collection)
        finally:
            client.close()
        if not exists:
            return Check(WARN, f"Qdrant answers; collection {collection} not built yet (ingest_laws)")
        return Check(OK, f"Qdrant answers; collection {collection} present")
    return _check_local_path(Path(settings.QDRANT_PATH), collection)


def _check_shard(collection: str) -> Check:
    """The Edge shard searches read (knowledge/edge.py): its manifest, not the shard, so that readiness costs a file
    read; a shard of another engine version is rebuilt by the first search (warn: build_search_shards first)."""
    from knowledge import edge

    generation = edge.current_generation(collection)
    if generation is None:
        return Check(WARN, f"no search shard of {collection} yet (ingest_laws or build_search_shards)")
    manifest = json.loads((edge.shard_root(collection) / generation / edge.MANIFEST).read_text(encoding="utf-8"))
    why = edge.outdated(manifest)
    if why:
        return Check(WARN, f"search shard of {collection} {why}: run build_search_shards")
    return Check(OK, f"search shard of {collection} present ({manifest.get('points')} points)")


def _check_local_path(path: Path, collection: str) -> Check:
    """A local-path store opens in one process only (a worker holds it) and opening it loads it whole (19 s at
    51k): readiness reads its catalogue file instead of opening it."""
    from knowledge import index

    client = index.held_client()
    if client is not None:  # this process holds the store already (embedded mode runs stages here)
        return (Check(OK, f"local store open here; collection {collection} present")
                if client.collection_exists(collection)
                else Check(WARN, f"local store open here; collection {collection} not built yet (ingest_laws)"))
    meta = path / "meta.json"
    if not meta.exists():
        return Check(WARN, "local store empty: nothing ingested yet (ingest_laws)")
    collections = json.loads(meta.read_text(encoding="utf-8")).get("collections") or {}
    if collection not in collections:
        return Check(WARN, f"local store readable; collection {collection} not built yet (ingest_laws)")
    if not os.access(path / "collection" / collection, os.R_OK | os.X_OK):
        return Check(DOWN, f"local store: collection {collection} is not readable")
    return Check(OK, f"local store readable; collection {collection} present")


# --- the snippet storage ---------------------------------------------------------------------------------------
def check_snippets(timeout_s: float) -> Check:
    from django.core.files.storage import storages

    storage = storages["snippets"]
    location = getattr(storage, "location", None)
    if location is not None and not hasattr(storage, "bucket_name"):  # a filesystem storage
        return _check_directory(Path(location))
    bucket = storage.bucket_name  # type: ignore[attr-defined]  # S3Storage (django-storages)
    storage.connection.meta.client.head_bucket(Bucket=bucket)  # type: ignore[attr-defined]  # boto3 resource
    return Check(OK, f"bucket {bucket} answers")


def _check_directory(path: Path) -> Check:
    if path.is_dir():
        if os.access(path, os.R_OK | os.W_OK | os.X_OK):
            return Check(OK, "snippet directory writable")
        return Check(DOWN, "snippet directory is not writable")
    parent = next((p for p in path.parents if p.exists()), None)
    if parent is not None and os.access(parent, os.W_OK | os.X_OK):
        return Check(WARN, "snippet directory not created yet: nothing ingested")
    return Check(DOWN, "snippet directory missing and cannot be created")


# --- all together ----------------------------------------------------------------------------------------------
FAILURE_REASONS = {
    "database": "the database did not answer",
    "broker": "the broker did not answer",
    "search": "the search engine did not answer",
    "snippets": "the snippet storage did not answer",
}


def probes() -> list[Probe]:
    return [
        Probe("database", check_database, settings.READYZ_DB_TIMEOUT_S),
        Probe("broker", check_broker, settings.READYZ_BROKER_TIMEOUT_S),
        Probe("search", check_search, settings.READYZ_SEARCH_TIMEOUT_S),
        Probe("snippets", check_snippets, settings.READYZ_STORAGE_TIMEOUT_S),
    ]


def run_probes(items: list[Probe]) -> dict[str, Check]:
    """Every probe at once; one that has not answered within its own bound is ``down`` (its thread is left to
    the client's own timeout, never joined)."""
    started = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=len(items), thread_name_prefix="readyz")
    try:
        futures: dict[str, tuple[Probe, Future[Check]]] = {p.name: (p, pool.submit(p.run, p.timeout_s))
                                                           for p in items}
        return {name: _outcome(probe, future, started) for name, (probe, future) in futures.items()}
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _outcome(probe: Probe, future: Future[Check], started: float) -> Check:
    generic = FAILURE_REASONS.get(probe.name, "did not answer")
    try:
        return future.result(timeout=max(0.0, started + probe.timeout_s - time.monotonic()))
    except FutureTimeout:
        logger.warning("readiness check timed out", extra={"check": probe.name, "timeout_s": probe.timeout_s})
        return Check(DOWN, f"{generic} within {probe.timeout_s:g} s")
    except Exception as exc:  # any client error: the kind goes to the log, the body says only what failed
        logger.warning("readiness check failed", extra={"check": probe.name, "error": f"{type(exc).__name__}: {exc}"})
        return Check(DOWN, generic)
