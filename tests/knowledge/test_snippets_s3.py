"""The snippet store on S3 / Cloudflare R2 (knowledge/snippets.py through django-storages' S3Storage, boto3),
against a real S3 API server on loopback (moto_server), with path-style addressing and the deterministic keys."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from django.core.files.storage import Storage, storages

from knowledge import index
from knowledge.ingest.laws import laws_ingest
from knowledge.snippets import SnippetLoadError, SnippetStore, snippet_key
from lexery.settings import s3_client_config
from tests.support.loopback import moto_server, stalled_server

pytestmark = pytest.mark.s3

BUCKET = "lexery-snippets-test"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A moto_server process on a free loopback port, for this module."""
    with moto_server(tmp_path_factory.mktemp("moto") / "moto.log") as endpoint:
        yield endpoint


@pytest.fixture
def s3_env(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    for k, v in CREDENTIALS.items():
        monkeypatch.setenv(k, v)
    client = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1")
    existing = {b["Name"] for b in client.list_buckets().get("Buckets", [])}
    if BUCKET not in existing:
        client.create_bucket(Bucket=BUCKET)
    return s3_endpoint


def s3_storage(endpoint: str, *, connect_timeout_s: float = 3.0, read_timeout_s: float = 5.0,
               max_attempts: int = 2) -> Storage:
    """The same backend and options that settings configure for SNIPPET_STORAGE=s3 (timeouts included)."""
    config = s3_client_config(connect_timeout_s=connect_timeout_s, read_timeout_s=read_timeout_s,
                              max_attempts=max_attempts, addressing_style="path")
    return storages.create_storage({"BACKEND": "storages.backends.s3.S3Storage",
                                    "OPTIONS": {"bucket_name": BUCKET, "endpoint_url": endpoint,
                                                "region_name": "auto", "addressing_style": "path",
                                                "client_config": config, "file_overwrite": True}})


def bucket_keys(endpoint: str, prefix: str) -> set[str]:
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return {o["Key"] for page in pages for o in page.get("Contents", [])}


def test_a_snippet_round_trips_under_its_deterministic_key(s3_env: str) -> None:
    # given
    store = SnippetStore(storage=s3_storage(s3_env))
    key = snippet_key(act_nreg="254к/96-ВР", article="43", ordinal=0)
    text = "Кожен має право на працю, що включає можливість заробляти собі на життя працею."
    # when
    store.put(key, text)
    store.put(key, text + " Оновлено.")  # re-ingestion overwrites the same key
    # then
    assert store.get(key) == text + " Оновлено."
    assert key in bucket_keys(s3_env, "lldbi/")
    assert key.startswith("lldbi/254к_96-вр/st43-")


def test_path_style_addressing_is_used(s3_env: str) -> None:
    storage = s3_storage(s3_env)
    url = storage.url(snippet_key(act_nreg="322-08", article="36", ordinal=0))
    assert url.startswith(f"{s3_env}/{BUCKET}/lldbi/322-08/")  # bucket in the path, not in the host name


def test_a_missing_key_is_a_typed_error_and_a_warning_in_get_many(s3_env: str) -> None:
    # given one stored snippet and one key that was never written
    store = SnippetStore(storage=s3_storage(s3_env))
    present = snippet_key(act_nreg="322-08", article="36", ordinal=0)
    missing = snippet_key(act_nreg="322-08", article="9999", ordinal=0)
    store.put(present, "Переведення на іншу роботу.")
    # when / then
    with pytest.raises(SnippetLoadError) as err:
        store.get(missing)
    assert err.value.key == missing
    texts, warnings = store.get_many([present, missing, present])
    assert texts == {present: "Переведення на іншу роботу."}
    assert warnings == [f"snippet_load_failed:{missing}"]


def test_an_unreachable_endpoint_is_a_typed_error_too(s3_env: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    store = SnippetStore(storage=s3_storage("http://127.0.0.1:9"))
    texts, warnings = store.get_many(["lldbi/x/st1-000000/c0.txt"])
    assert texts == {}
    assert warnings == ["snippet_load_failed:lldbi/x/st1-000000/c0.txt"]


def test_ingest_writes_the_snippets_to_s3(s3_env: str, settings: Any, tmp_path: Path, db: Any) -> None:
    # given the snippets storage configured as SNIPPET_STORAGE=s3 configures it, and a collection of their own
    settings.STORAGES = {**settings.STORAGES, "snippets": {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {"bucket_name": BUCKET, "endpoint_url": s3_env, "region_name": "auto",
                    "addressing_style": "path", "file_overwrite": True}}}
    settings.LLDBI_COLLECTION = "lldbi_s3_test"
    corpus = tmp_path / "three.jsonl"
    rows = [{"act_nreg": "9999-99", "act_title": "Про тестовий акт", "article": str(i), "title": f"Стаття {i}. Тест",
             "text": f"Текст статті {i} тестового акта про зберігання фрагментів."} for i in (1, 2, 3)]
    corpus.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    # when
    report = laws_ingest(path=corpus, show_progress=False, update_catalog=False)
    # then every chunk's text is in the bucket under the key its point carries
    assert report.upserted == 3
    payloads = [p for p, _ in index.scan(index.get_client(), "lldbi_s3_test")]
    assert {p["r2_key"] for p in payloads} <= bucket_keys(s3_env, "lldbi/9999-99/")
    assert SnippetStore(storage=s3_storage(s3_env)).get(payloads[0]["r2_key"]).startswith("Текст статті")
    index.get_client().delete_collection("lldbi_s3_test")


# --- a stalled endpoint (issue 13, item 5; seed 000: a timeout excludes the snippet with a warning) ---------
@pytest.fixture
def stalled_endpoint() -> Iterator[str]:
    """A loopback server that accepts every connection and never answers: R2 hanging mid-request."""
    with stalled_server() as port:
        yield f"http://127.0.0.1:{port}"


KEYS = [f"lldbi/322-08/st{n}-000000/c0.txt" for n in (36, 38, 40, 44)]


def load_within(store: SnippetStore, keys: list[str], limit_s: float) -> tuple[dict[str, str], list[str], float]:
    """get_many in a thread, given ``limit_s`` to return: on a store without timeouts it would hang for minutes."""
    out: list[tuple[dict[str, str], list[str]]] = []
    started = time.monotonic()
    worker = threading.Thread(target=lambda: out.append(store.get_many(keys)), daemon=True)
    worker.start()
    worker.join(timeout=limit_s)
    assert not worker.is_alive(), f"get_many still loading after {limit_s} s"
    texts, warnings = out[0]
    return texts, warnings, time.monotonic() - started


def test_a_stalled_endpoint_excludes_its_snippets_with_warnings_within_the_read_timeout(
        stalled_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in CREDENTIALS.items():
        monkeypatch.setenv(k, v)
    # given an S3 storage with a 1 s read timeout and one attempt, four keys, loaded four at a time
    store = SnippetStore(storage=s3_storage(stalled_endpoint, read_timeout_s=1.0, max_attempts=1),
                         concurrency=4, deadline_s=30)
    # when
    texts, warnings, took = load_within(store, KEYS, limit_s=15)
    # then every key is excluded with a warning, and the keys waited side by side, not one after another
    assert texts == {}
    assert warnings == [f"snippet_load_failed:{k}" for k in KEYS]
    assert took < 4 * 1.0 + 2, took


def test_the_batch_deadline_bounds_a_load_whatever_the_storage_timeouts(
        stalled_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in CREDENTIALS.items():
        monkeypatch.setenv(k, v)
    # given a storage that would wait 30 s per read, and a 1.5 s deadline for the batch
    store = SnippetStore(storage=s3_storage(stalled_endpoint, read_timeout_s=30.0, max_attempts=1),
                         concurrency=2, deadline_s=1.5)
    # when
    texts, warnings, took = load_within(store, KEYS, limit_s=10)
    # then nothing waits past the deadline: every key is excluded as timed out
    assert texts == {} and warnings == [f"snippet_load_timeout:{k}" for k in KEYS]
    assert took < 1.5 + 1.5, took


def test_u9_on_a_stalled_store_assembles_without_the_snippets_and_says_why(
        stalled_endpoint: str, s3_env: str, monkeypatch: pytest.MonkeyPatch, db: Any) -> None:
    # given the run's evidence lives on a stalled R2, except one article moto serves
    from engine.runners import run_u9
    from tests.assemble.test_u9_adapter import KEYS as U9_KEYS
    from tests.assemble.test_u9_adapter import REFS, document, env, prompt_of

    good = SnippetStore(storage=s3_storage(s3_env))
    good.put(U9_KEYS[0], "Стаття 75. Працівникам надається щорічна основна відпустка.")

    class Mixed(SnippetStore):  # the first key from moto, the others from the stalled endpoint
        def get(self, key: str) -> str:
            return good.get(key) if key == U9_KEYS[0] else stalled.get(key)

    stalled = SnippetStore(storage=s3_storage(stalled_endpoint, read_timeout_s=1.0, max_attempts=1))
    store = Mixed(storage=good.storage, concurrency=4, deadline_s=10)
    # when U9 assembles
    started = time.monotonic()
    prompt = prompt_of(run_u9(document(), env(store, layered=False)))
    # then the stage finished with the snippet it could load, and the warnings name the others
    assert time.monotonic() - started < 10
    assert [s.article_ref for s in prompt.snippets] == [REFS[0]]
    for key, ref in zip(U9_KEYS[1:], REFS[1:], strict=True):
        assert f"snippet_load_failed:{key}" in prompt.meta.warnings
        assert f"evidence_excluded:{ref}" in prompt.meta.warnings
