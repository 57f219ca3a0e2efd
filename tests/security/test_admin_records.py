"""Issue 12, item 5: billing and stage records cannot be edited or made to vanish in admin; passwords are
validated; the console's login is throttled."""

from __future__ import annotations

from decimal import Decimal
from typing import cast

import pytest
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.cache import caches
from django.core.exceptions import ValidationError
from django.db.models import ProtectedError
from django.test import Client
from django.utils import timezone

from llm.models import CostLedgerEntry
from runs.models import Run, StageEvent
from tenancy.models import Specialist
from tests.factories import SpecialistFactory, org_create

PASSWORD = "console-pass-123"


@pytest.fixture
def root(db) -> Client:
    User.objects.create_superuser("root", "root@example.com", PASSWORD)
    browser = Client()
    browser.login(username="root", password=PASSWORD)
    return browser


@pytest.fixture
def billed_run(db) -> Run:
    specialist = cast(Specialist, SpecialistFactory(org=org_create("billed"), slug="labour"))
    run = Run.objects.create(org=specialist.org, specialist=specialist, question="Скільки днів відпустки?")
    CostLedgerEntry.objects.create(run=run, stage="U10", idempotency_key="k1", provider="openai", model="gpt-4o",
                                   cost_usd=Decimal("0.01"))
    StageEvent.objects.create(run=run, step=1, stage="U1", attempt=1, outcome="ok", started_at=timezone.now())
    return run


def test_ledger_rows_and_stage_events_are_read_only_in_admin(root, billed_run):
    row = CostLedgerEntry.objects.get(run=billed_run)
    event = StageEvent.objects.get(run=billed_run)

    for model, pk in (("llm/costledgerentry", row.pk), ("runs/stageevent", event.pk)):
        assert root.get(f"/admin/{model}/").status_code == 200  # still visible
        assert root.get(f"/admin/{model}/add/").status_code == 403
        assert root.post(f"/admin/{model}/{pk}/delete/", {"post": "yes"}).status_code == 403
        page = root.get(f"/admin/{model}/{pk}/change/")
        assert page.status_code == 200 and b'name="_save"' not in page.content  # a view, no save button

    assert CostLedgerEntry.objects.filter(pk=row.pk).exists() and StageEvent.objects.filter(pk=event.pk).exists()


def test_deleting_a_run_never_takes_its_billing_rows_with_it(billed_run):
    with pytest.raises(ProtectedError):
        billed_run.delete()

    assert CostLedgerEntry.objects.filter(run=billed_run).count() == 1


@pytest.mark.django_db
def test_weak_passwords_are_refused():
    for weak in ("12345678", "password", "short"):
        with pytest.raises(ValidationError):
            validate_password(weak)
    validate_password("a-long-and-uncommon-passphrase-17")


def test_the_console_login_is_throttled_after_repeated_failures(root, settings):
    settings.ADMIN_LOGIN_MAX_FAILURES = 3
    caches["throttle"].clear()
    stranger = Client()

    statuses = [stranger.post("/admin/login/", {"username": "root", "password": f"wrong-{i}"}).status_code
                for i in range(4)]
    right_password_too_late = stranger.post("/admin/login/", {"username": "root", "password": PASSWORD})

    assert statuses == [200, 200, 200, 429]  # 200: the form again with an error
    assert right_password_too_late.status_code == 429 and right_password_too_late["Retry-After"]
    caches["throttle"].clear()
