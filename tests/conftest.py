from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import redis
from rest_framework.test import APIClient

from knowledge import index
from knowledge.ingest.catalog import catalog_load
from knowledge.ingest.laws import laws_ingest
from knowledge.models import Act
from tenancy.auth import api_key_create
from tenancy.models import Org, Specialist
from tests.factories import SpecialistFactory
from tests.support.broker import BROKER_URL, celery_broker
from tests.support.corpus import DEMO_DIR, write_subset


@pytest.fixture(scope="session")
def lldbi_index(tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """The test slice of the demo corpus, embedded with the real model into the local Qdrant (once)."""
    path, counts = write_subset(tmp_path_factory.mktemp("corpus") / "subset.jsonl")
    laws_ingest(path=path, show_progress=False, update_catalog=False)
    return counts


@pytest.fixture
def catalog(db: Any, lldbi_index: dict[str, int]) -> None:
    """The demo DocList catalog, with the acts of the test slice marked indexed."""
    catalog_load(acts_path=DEMO_DIR / "catalog_acts.jsonl", aliases_path=DEMO_DIR / "act_aliases.jsonl")
    Act.objects.filter(nreg__in=list(lldbi_index)).update(indexed=True)


@pytest.fixture
def org(db: Any) -> Org:
    return Org.objects.create(slug="acme", name="Acme")


@pytest.fixture
def specialist(org: Org) -> Specialist:
    return cast(Specialist, SpecialistFactory(org=org, slug="labour"))


@pytest.fixture
def api(org: Org) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key_create(org=org)}")
    return client


@pytest.fixture
def release_qdrant() -> Iterator[None]:
    """Close this process's local Qdrant so a worker process can open the same path."""
    index.close_client()
    yield
    index.close_client()


def post_run(api: APIClient, **body: Any) -> Any:
    return api.post("/api/v1/runs", body, format="json")


__all__ = ["Path", "post_run"]


@pytest.fixture
def broker(settings: Any) -> Iterator[redis.Redis]:
    """This process on the real Redis broker (E2E_BROKER_URL, flushed before and after): stage tasks are sent
    there and wait in their queues, nothing runs them. The Redis client is for looking at the queues."""
    client = redis.Redis.from_url(BROKER_URL)
    client.flushdb()
    # Celery reads its conf from the Django settings lazily: repoint (and remember the eager mode to restore)
    # before the setting changes, or every later test would inherit a non-eager app.
    with celery_broker(BROKER_URL):
        settings.CELERY_TASK_ALWAYS_EAGER = False
        yield client
    client.flushdb()


@pytest.fixture(autouse=True)
def run_documents_round_trip() -> Iterator[None]:
    """Every RunContext document a test stores parses into ``RunDocument`` and dumps back unchanged: the typed
    model is lossless for every document the suite produces, not only the ones written for its own test."""
    import json

    from django.db.models.signals import post_save

    from pipeline.context import RunDocument
    from runs.models import RunContext

    lost: list[str] = []

    def check(sender: type[RunContext], instance: RunContext, **kwargs: Any) -> None:
        stored = json.loads(json.dumps(instance.document))  # what the JSON column holds
        if RunDocument.parse(stored).dump() != stored:
            lost.append(f"run {instance.run_id}: {sorted(stored)}")

    post_save.connect(check, sender=RunContext, weak=False, dispatch_uid="run-documents-round-trip")
    yield
    post_save.disconnect(sender=RunContext, dispatch_uid="run-documents-round-trip")
    assert not lost, f"RunDocument lost data on: {lost}"
