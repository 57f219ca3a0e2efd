"""Writes about runs. ``run_create`` validates, stores the run and its empty context, and enqueues U1 after
commit: a rejected request stores nothing."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

from knowledge.text import normalize
from orch.dispatch import enqueue_stage
from runs.models import Org, Run, RunContext, Specialist

logger = logging.getLogger(__name__)


class RunInputError(ValueError):
    """Bad input for a new run; the message is a sentence for the client."""


def specialist_get_for_org(*, org: Org, slug: str) -> Specialist:
    specialist = Specialist.objects.filter(org=org, slug=slug).first()
    if specialist is None:
        if Specialist.objects.filter(slug=slug).exists():
            raise RunInputError(f"specialist {slug!r} belongs to another org")
        raise RunInputError(f"unknown specialist {slug!r}")
    return specialist


def run_create(*, org: Org, specialist: Specialist, question: str) -> Run:
    cleaned = normalize(question or "")
    if not cleaned:
        raise RunInputError("question must not be empty")
    if len(cleaned) > settings.QUESTION_MAX_CHARS:
        raise RunInputError(f"question is {len(cleaned)} characters long; the limit is {settings.QUESTION_MAX_CHARS}")
    if specialist.org_id != org.id:
        raise RunInputError(f"specialist {specialist.slug!r} belongs to another org")
    with transaction.atomic():
        run = Run.objects.create(org=org, specialist=specialist, question=cleaned)
        RunContext.objects.create(run=run, document={})
        enqueue_stage(str(run.id), "U1", 1)
    logger.info("run created", extra={"run_id": str(run.id), "specialist": specialist.slug})
    run.refresh_from_db()
    return run
