"""Issue 12, item 4: keys expire, record when they were last used, are revoked by a command, are created in admin
with the key shown once, and every creation and revocation is audited."""

from __future__ import annotations

import re
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from tenancy.auth import api_key_create, digest
from tenancy.models import ApiKey, ApiKeyAudit


def client_with(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.mark.django_db
def test_a_new_key_expires_after_the_ttl_and_an_expired_key_is_refused(org, settings):
    settings.API_KEY_TTL_DAYS = 30
    key = api_key_create(org=org)
    row = ApiKey.objects.get(digest=digest(key))
    assert row.expires_at is not None
    assert timedelta(days=29) < row.expires_at - timezone.now() <= timedelta(days=30)
    assert client_with(key).get("/api/v1/memory").status_code == 200

    ApiKey.objects.filter(pk=row.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    refused = client_with(key).get("/api/v1/memory")

    assert refused.status_code == 401 and "expired" in refused.json()["detail"]


@pytest.mark.django_db
def test_last_used_is_recorded_but_not_written_on_every_request(org, settings, django_assert_max_num_queries):
    settings.API_KEY_LAST_USED_RESOLUTION_S = 60
    key = api_key_create(org=org)
    client = client_with(key)

    client.get("/api/v1/memory")
    first = ApiKey.objects.get(digest=digest(key)).last_used_at
    client.get("/api/v1/memory")

    assert first is not None and timezone.now() - first < timedelta(seconds=10)
    assert ApiKey.objects.get(digest=digest(key)).last_used_at == first


@pytest.mark.django_db
def test_revoke_api_key_refuses_the_key_at_once_and_audits_it(org):
    key = api_key_create(org=org)
    row = ApiKey.objects.get(digest=digest(key))
    out = StringIO()

    call_command("revoke_api_key", "--prefix", row.prefix, "--reason", "leaked in a ticket", stdout=out)

    assert f"revoked acme:{row.prefix}" in out.getvalue()
    assert client_with(key).get("/api/v1/memory").status_code == 401
    trail = [(a.action, a.actor, a.reason) for a in ApiKeyAudit.objects.filter(key_prefix=row.prefix).order_by("at")]
    assert trail == [("created", "system", ""), ("revoked", "manage.py revoke_api_key", "leaked in a ticket")]


@pytest.mark.django_db
def test_admin_creates_a_working_key_shows_it_once_and_a_second_add_works_too(org):
    User.objects.create_superuser("root", "root@example.com", "console-pass-123")
    browser = Client()
    browser.login(username="root", password="console-pass-123")

    shown = []
    for name in ("portal", "portal-2"):
        page = browser.post("/admin/tenancy/apikey/add/", {"org": org.pk, "name": name, "expires_at_0": "",
                                                        "expires_at_1": ""}, follow=True)
        assert page.status_code == 200
        shown += re.findall(r"<code>(lx_[A-Za-z0-9_-]+)</code>", page.content.decode())

    assert len(shown) == 2 and shown[0] != shown[1]
    for key in shown:
        row = ApiKey.objects.get(digest=digest(key))  # a real digest, never an empty one
        assert row.org == org and client_with(key).get("/api/v1/memory").status_code == 200
        assert ApiKeyAudit.objects.get(key_prefix=row.prefix, action="created").actor == "admin:root"
    listing = browser.get("/admin/tenancy/apikey/").content.decode()
    assert shown[0] not in listing  # the key is shown once, never again
