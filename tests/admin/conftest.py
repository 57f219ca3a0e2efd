"""Operators for the console tests: a superuser, and a staff member who may look at runs and flags but not change
a flag. A finished run made by the real pipeline (the test slice of the demo corpus)."""

from __future__ import annotations

from typing import Any, cast

import pytest
from django.contrib.auth.models import Permission, User

from flags.services import flags_sync_registry
from runs.models import Run
from runs.services import run_create
from tenancy.models import Org, Specialist
from tests.factories import OrgFactory, SpecialistFactory

LEAVE_QUESTION = "Скільки календарних днів триває щорічна основна відпустка?"
PASSWORD = "console-pass-123"
VIEW_PERMISSIONS = ("view_featureflag", "view_flagoverride", "view_flagaudit", "view_run", "view_runcontext",
                    "view_stageevent", "view_costledgerentry", "view_specialist", "view_org")


@pytest.fixture
def superuser(db: Any) -> User:
    return User.objects.create_superuser("root", "root@example.com", PASSWORD)


@pytest.fixture
def viewer(db: Any) -> User:
    user = User.objects.create_user("viewer", "viewer@example.com", PASSWORD, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=VIEW_PERMISSIONS))
    return user


@pytest.fixture
def flags_row(db: Any) -> None:
    flags_sync_registry()


def run_question(specialist: Specialist, question: str = LEAVE_QUESTION) -> Run:
    """Create a run and let the in-process pipeline finish it (callers capture on_commit, or are transactional)."""
    return run_create(org=specialist.org, specialist=specialist, question=question)


@pytest.fixture
def finished_run(specialist: Specialist, catalog: None, django_capture_on_commit_callbacks: Any) -> Run:
    with django_capture_on_commit_callbacks(execute=True):
        run = run_question(specialist)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.error
    return run


def new_specialist(**kwargs: Any) -> Specialist:
    return cast(Specialist, SpecialistFactory(**kwargs))


def new_org() -> Org:
    return cast(Org, OrgFactory())
