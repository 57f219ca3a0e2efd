"""Issue 12, item 8: old runs are purged (contexts, events, history copies, personal fields; the ledger kept whole)
and an end user can be forgotten (memory, documents with their files, and their runs)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from io import StringIO
from typing import Any

import pytest
from django.core.files.storage import storages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.utils import timezone

from documents.models import UserDocument
from engine.channel_ports import history_key
from llm.models import CostLedgerEntry
from memory.models import MemoryItem
from runs.models import Run, RunContext, StageEvent
from runs.tasks import runs_purge_task
from tests.conftest import post_run


def ask(api: Any, capture: Any, question: str, **extra: Any) -> dict[str, Any]:
    with capture(execute=True):
        created = post_run(api, question=question, specialist="labour", **extra)
    return api.get(f"/api/v1/runs/{created.json()['id']}").json()


def age(run_id: str, days: int) -> None:
    Run.objects.filter(pk=run_id).update(created_at=timezone.now() - timedelta(days=days))


@pytest.mark.django_db
def test_purge_runs_removes_old_runs_content_and_keeps_their_billing(api, specialist, catalog,
                                                                     django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    old = ask(api, capture, "Скільки календарних днів триває щорічна основна відпустка?", user_ref="u1",
              conversation_id="c1")
    later = ask(api, capture, "А якщо працівнику менше вісімнадцяти років?", user_ref="u1", conversation_id="c1")
    storage = storages["snippets"]
    copy = history_key(org_id=specialist.org_id, run_id=old["id"])
    assert old["status"] == later["status"] == "done" and storage.exists(copy)
    ledger = CostLedgerEntry.objects.filter(run_id=old["id"]).count()
    assert ledger > 0
    age(old["id"], 40)

    out = StringIO()
    with capture(execute=True):
        call_command("purge_runs", "--older-than", "30", stdout=out)

    assert "purged 1 run(s)" in out.getvalue()
    purged = Run.objects.get(pk=old["id"])
    assert purged.purged_at and (purged.question, purged.user_ref, purged.conversation_id) == ("", "", "")
    assert not RunContext.objects.filter(run_id=old["id"]).exists()
    assert not StageEvent.objects.filter(run_id=old["id"]).exists()
    assert not storage.exists(copy)
    assert CostLedgerEntry.objects.filter(run_id=old["id"]).count() == ledger  # billing kept whole
    assert RunContext.objects.filter(run_id=later["id"]).exists()  # a recent run is untouched
    assert api.get(f"/api/v1/runs/{old['id']}").json()["answer"] is None


@pytest.mark.django_db
def test_the_beat_task_purges_by_the_retention_setting(specialist, settings):
    settings.RUN_RETENTION_DAYS = 10
    run = Run.objects.create(org=specialist.org, specialist=specialist, question="стара", status=Run.Status.DONE)
    fresh = Run.objects.create(org=specialist.org, specialist=specialist, question="нова", status=Run.Status.DONE)
    age(str(run.pk), 11)

    assert runs_purge_task() == 1
    assert Run.objects.get(pk=run.pk).purged_at and Run.objects.get(pk=fresh.pk).purged_at is None
    assert settings.CELERY_BEAT_SCHEDULE["purge-runs"]["task"] == "runs.purge"


@pytest.mark.django_db
def test_forget_user_removes_their_memory_documents_and_runs_and_no_one_elses(api, specialist,
                                                                            django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    for user in ("u1", "u2"):
        assert api.post("/api/v1/memory", {"user_ref": user, "text": "Я бухгалтер."}, format="json").status_code == 201
        with capture(execute=True):
            file = SimpleUploadedFile("d.txt", "Договір оренди.".encode(), "text/plain")
            assert api.post("/api/v1/documents", {"file": file, "user_ref": user},
                            format="multipart").status_code == 202
    run = Run.objects.create(org=specialist.org, specialist=specialist, question="Моє питання", user_ref="u1")
    CostLedgerEntry.objects.create(run=run, stage="U10", idempotency_key="k", provider="offline", model="m",
                                   cost_usd=Decimal("0"))
    doc = UserDocument.objects.get(user_ref="u1")
    storage = storages["snippets"]
    assert storage.exists(doc.storage_key)

    out = StringIO()
    with capture(execute=True):
        call_command("forget_user", "--org", specialist.org.slug, "--user-ref", "u1", stdout=out)

    assert "forgot 1 memory item(s), 1 document(s), 1 run(s)" in out.getvalue()
    assert not MemoryItem.objects.filter(user_ref="u1").exists() and MemoryItem.objects.filter(user_ref="u2").exists()
    assert not UserDocument.objects.filter(user_ref="u1").exists()
    assert UserDocument.objects.filter(user_ref="u2").exists()
    assert not storage.exists(doc.storage_key)
    forgotten = Run.objects.get(pk=run.pk)
    assert (forgotten.question, forgotten.user_ref) == ("", "") and forgotten.purged_at
