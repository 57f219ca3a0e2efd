"""Issue 12, item 5: deleting an org goes through a service that removes its users' documents (files, chunks,
vectors), memory and run content, and revokes its keys; billing rows keep the org row."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.core.files.storage import storages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from documents.models import UserDocument
from llm.models import CostLedgerEntry
from memory.models import MemoryItem
from runs.models import Run
from tenancy.models import ApiKey, Org


@pytest.mark.django_db
def test_the_admin_deletes_an_org_with_its_users_data_and_keeps_billing(api, specialist,
                                                                     django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    org = specialist.org
    assert api.post("/api/v1/memory", {"user_ref": "u1", "text": "Я бухгалтер."}, format="json").status_code == 201
    with capture(execute=True):
        file = SimpleUploadedFile("d.txt", "Договір оренди.".encode(), "text/plain")
        assert api.post("/api/v1/documents", {"file": file, "user_ref": "u1"}, format="multipart").status_code == 202
    stored = UserDocument.objects.get(org=org).storage_key
    billed = Run.objects.create(org=org, specialist=specialist, question="Питання", user_ref="u1")
    CostLedgerEntry.objects.create(run=billed, stage="U10", idempotency_key="k", provider="offline", model="m",
                                   cost_usd=Decimal("0"))
    empty = Org.objects.create(slug="empty", name="Empty")
    User.objects.create_superuser("root", "root@example.com", "console-pass-123")
    browser = Client()
    browser.login(username="root", password="console-pass-123")
    assert browser.post(f"/admin/tenancy/org/{org.pk}/delete/").status_code == 403  # the plain delete is off

    with capture(execute=True):
        page = browser.post("/admin/tenancy/org/", {"action": "delete_with_data",
                                                 "_selected_action": [org.pk, empty.pk]}, follow=True)

    assert page.status_code == 200
    assert not MemoryItem.objects.filter(org=org).exists() and not UserDocument.objects.filter(org=org).exists()
    assert not storages["snippets"].exists(stored)
    assert not ApiKey.objects.filter(org=org, revoked_at__isnull=True).exists()
    assert api.get("/api/v1/memory").status_code == 401
    assert Run.objects.get(pk=billed.pk).purged_at and CostLedgerEntry.objects.filter(run=billed).exists()
    assert Org.objects.filter(pk=org.pk).exists()  # kept for its billing rows
    assert not Org.objects.filter(pk=empty.pk).exists()  # nothing billed: gone
