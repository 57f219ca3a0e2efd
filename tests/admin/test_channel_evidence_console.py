"""The run page names every evidence item's source: a user's document shows as ``doc`` with its handle, beside
the law articles; the operator screens of memory items and documents list them read-only."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from documents.models import UserDocument
from memory.models import MemoryItem
from runs.models import Run, RunContext
from tests.admin.conftest import PASSWORD

pytestmark = pytest.mark.django_db

EVIDENCE = {"support_level": "strong", "items": [
    {"source": "doc", "rank": 1, "score": 1.0, "label": "doc:договір.txt#1",
     "heading": "Документ користувача «договір.txt», фрагмент 1", "r2_keys": ["docs/1/x/c0.txt"], "channels": ["doc"]},
    {"source": "lldbi", "rank": 2, "score": 0.04, "act_nreg": "322-08", "act_label": "КЗпП", "article": "75",
     "article_ref": "КЗпП ст. 75", "r2_keys": ["lldbi/322-08/st75/c0.txt"], "channels": ["lexical"]},
]}


def login(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def test_the_run_page_shows_each_evidence_items_source(superuser, specialist):
    run = Run.objects.create(org=specialist.org, specialist=specialist, question="Що в моєму договорі?",
                             status=Run.Status.DONE, user_ref="u1")
    RunContext.objects.create(run=run, document={"evidence_assembly": EVIDENCE})

    html = login(superuser).get(reverse("admin:runs_run_change", args=[run.pk])).content.decode()

    table = re.search(r'<table class="console-table" id="evidence-table">.*?</table>', html, re.S)
    assert table, html[:500]
    cells = re.findall(r"<tr><td>(\d+)</td><td>(\w+)</td><td>([^<]*)", table.group(0))
    rows = [(rank, source, ref.strip()) for rank, source, ref in cells]
    assert rows == [("1", "doc", "doc:договір.txt#1"), ("2", "lldbi", "КЗпП ст. 75")]


def test_memory_items_and_documents_have_read_only_operator_screens(superuser, specialist):
    MemoryItem.objects.create(org=specialist.org, user_ref="u1", text="Працюю бухгалтером.", r2_key="memory/x.txt")
    UserDocument.objects.create(org=specialist.org, user_ref="u1", filename="договір.txt", content_type="text/plain",
                                kind="txt", size=10, storage_key="docs/x/original.txt", n_chunks=1,
                                status=UserDocument.Status.INDEXING)
    client = login(superuser)

    for name, text in (("memory_memoryitem", "Працюю бухгалтером."), ("documents_userdocument", "договір.txt")):
        page = client.get(reverse(f"admin:{name}_changelist") + "?status=indexing" * (name.startswith("doc")))
        assert page.status_code == 200 and text in page.content.decode()
        assert client.get(reverse(f"admin:{name}_add")).status_code == 403
