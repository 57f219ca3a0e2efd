"""Writes about runs. ``run_create`` validates, stores the run and its empty context, and enqueues U1 after
commit: a rejected request stores nothing."""

from __future__ import annotations

import logging
import re

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from engine.entry import NotResumable, run_open, run_rerun, run_resume
from legaltext.text import has_visible_text, normalize
from lexery.errors import Conflict, InputError
from lexery.logging import current_request_id
from orch.policy import STAGES
from pipeline.contracts import Clarification, ClarificationOption, CoverageGap
from pipeline.document import read
from recovery.recover import gap_for_answer
from runs.models import Run, RunContext
from tenancy.models import Org, Specialist

logger = logging.getLogger(__name__)


class RunInputError(InputError):
    """Bad input for a new run; the message is a sentence for the client."""


def specialist_get_for_org(*, org: Org, slug: str) -> Specialist:
    specialist = Specialist.objects.filter(org=org, slug=slug).first()
    if specialist is None:  # one answer whether the slug exists elsewhere or not: nothing about other orgs leaks
        raise RunInputError(f"unknown specialist {slug!r}")
    return specialist


REF_MAX_CHARS = 100  # user_ref and conversation_id: the columns' width
REQUEST_ID_MAX_CHARS = 128  # Run.request_id's width: the longest id ops.middleware accepts from a caller


# A lone surrogate cannot be encoded to store (UnicodeEncodeError) and PostgreSQL refuses NUL in text: DRF's fields
# refuse both, but the commands (``ask`` decodes an argument's stray bytes to surrogates, eval_answers reads JSON
# "\ud800") reach the services directly, and those tracebacked (fuzzing, issue 12).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def check_text(value: str, *, name: str, error: type[ValueError]) -> str:
    """``value`` unchanged when a database can store it; else ``error`` with a sentence naming ``name``."""
    if _UNSTORABLE.search(value):
        raise error(f"{name} holds a NUL character or invalid Unicode (a lone surrogate)")
    return value


def clean_ref(value: str | None, *, name: str, error: type[ValueError], required_because: str | None = None) -> str:
    """A user_ref / conversation_id as stored: stripped, at most REF_MAX_CHARS; ``required_because`` makes an empty
    one an error with that reason. Each service raises its own input error, which its API turns into a 400."""
    cleaned = check_text((value or "").strip(), name=name, error=error)
    if not cleaned and required_because:
        raise error(f"{name} must not be empty: {required_because}")
    if len(cleaned) > REF_MAX_CHARS:
        raise error(f"{name} is {len(cleaned)} characters long; the limit is {REF_MAX_CHARS}")
    return cleaned


def run_create(*, org: Org, specialist: Specialist, question: str,
               flag_overrides: dict[str, bool] | None = None, user_ref: str = "", conversation_id: str = "") -> Run:
    """``flag_overrides`` (e.g. ``ask --assembler on``) win over the resolved flags at U1, for this run only.
    ``user_ref`` (the org's id for its end user) scopes the memory and documents the run may read;
    ``conversation_id`` links it to the earlier runs of that user whose turns it sees as history."""
    user_ref = clean_ref(user_ref, name="user_ref", error=RunInputError)
    conversation_id = clean_ref(conversation_id, name="conversation_id", error=RunInputError)
    cleaned = normalize(check_text(question or "", name="question", error=RunInputError))
    if not has_visible_text(cleaned):  # "\u200b\u200d", "\ufeff", combining marks alone: nothing to answer
        raise RunInputError("question must not be empty")
    if len(cleaned) > settings.QUESTION_MAX_CHARS:
        raise RunInputError(f"question is {len(cleaned)} characters long; the limit is {settings.QUESTION_MAX_CHARS}")
    if specialist.org_id != org.id:
        raise RunInputError(f"unknown specialist {specialist.slug!r}")
    run = Run(org=org, specialist=specialist, question=cleaned, flag_overrides=dict(flag_overrides or {}),
              user_ref=user_ref, conversation_id=conversation_id, request_id=_request_id())
    run_open(run=run)
    logger.info("run created", extra={"run_id": str(run.id), "specialist": specialist.slug})
    if settings.CELERY_TASK_ALWAYS_EAGER:
        # Embedded mode: the stages ran in-process when the transaction committed, so the run as stored is newer
        # than this object. With a broker nothing has touched it yet that this request could wait for: the object
        # is the run as written (queued), and reading it back would cost the API a round trip for nothing.
        run.refresh_from_db()
    return run


def _request_id() -> str:
    """The web request (or the task carrying one) this run is created in, kept on the run so that whatever is sent
    for it later without a request behind it (the reaper's re-sends) still logs the request that started it."""
    request_id = current_request_id()
    return "" if request_id == "-" else request_id[:REQUEST_ID_MAX_CHARS]


class RunStateError(Conflict):
    """The run is not in a state that allows this operation (HTTP 409)."""


def run_cancel(*, run: Run) -> Run:
    """Cancel a queued, running or waiting run. A stage in flight finishes its computation but persists nothing:
    the shell sees the terminal status under the row lock and stops there."""
    with transaction.atomic():
        locked = Run.objects.select_for_update().get(pk=run.pk)
        if locked.is_terminal:
            raise RunStateError(f"run is already {locked.status}; "
                                "only queued, running or waiting runs can be cancelled")
        locked.status, locked.finished_at = Run.Status.CANCELLED, timezone.now()
        locked.error = "cancelled by request"
        locked.save(update_fields=["status", "finished_at", "error", "updated_at"])
    logger.info("run cancelled", extra={"run_id": str(run.pk)})
    return locked


def _match_option(answer: str, options: list[ClarificationOption]) -> ClarificationOption | None:
    """A free-text answer picks the option whose label, nreg or title it names (one and only one)."""
    text = normalize(answer).lower()
    words_ = set(re.findall(r"[\w'’ʼ/-]+", text))
    hits = [o for o in options if o.label.lower() in words_ or o.nreg.lower() in words_]
    if not hits:
        stems = {w[:6] for w in words_ if len(w) > 3}
        hits = [o for o in options
                if {w[:6] for w in re.findall(r"\w+", o.title.lower()) if len(w) > 3 and w != "україни"} <= stems]
    return hits[0] if len(hits) == 1 else None


def run_clarification_answer(*, run: Run, option: str | None = None, answer: str | None = None) -> Run:
    """Bind the chosen act and resume the run where ORCH says (seed 001: from U7, keeping U4's hits)."""
    if not (option or answer) or (option and answer):
        raise RunInputError("give exactly one of 'option' (an offered act number) or 'answer' (free text)")
    check_text(option or answer or "", name="option" if option else "answer", error=RunInputError)
    with transaction.atomic():
        locked = Run.objects.select_for_update().get(pk=run.pk)
        if locked.status != Run.Status.AWAITING_CLARIFICATION:
            raise RunStateError(f"run is {locked.status}, not awaiting clarification")
        ctx = RunContext.objects.select_for_update().get(run=locked)
        asked = read(ctx.document, "clarification", Clarification)
        if asked is None or asked.answer_nreg is not None:
            raise RunStateError("run has no open clarification question")
        if option:
            chosen = next((o for o in asked.options if o.nreg.lower() == option.strip().lower()), None)
            if chosen is None:
                offered = ", ".join(f"{o.nreg} ({o.label})" for o in asked.options)
                raise RunInputError(f"option {option!r} was not offered; choose one of: {offered}")
        else:
            chosen = _match_option(answer or "", asked.options)
            if chosen is None:
                offered = ", ".join(f"{o.label} ({o.nreg})" for o in asked.options)
                raise RunInputError(f"could not tell which act the answer means; name one of: {offered}")
        answered = asked.model_copy(update={"answer_nreg": chosen.nreg, "answer_text": answer or option,
                                            "answered_at": timezone.now().isoformat()})
        gap = gap_for_answer(chosen, read(ctx.document, "coverage_gap", CoverageGap))
        try:
            run_resume(run=locked, ctx=ctx, write={"clarification": answered, "coverage_gap": gap})
        except NotResumable as exc:
            raise RunStateError(str(exc)) from exc
    logger.info("clarification answered", extra={"run_id": str(run.pk), "act": chosen.nreg})
    return locked


def run_rerun_from(*, run: Run, stage: str) -> Run:
    """A new run (same org, specialist and question, the same flag snapshot) that starts at ``stage`` with the old
    run's artifacts of the earlier stages. The old run keeps everything and is marked superseded."""
    if stage not in STAGES:
        raise RunInputError(f"unknown stage {stage!r}; choose one of {', '.join(STAGES)}")
    with transaction.atomic():
        old = Run.objects.select_for_update().get(pk=run.pk)
        if not old.is_terminal:
            raise RunStateError(f"run is {old.status}; only a finished run (done, failed or cancelled) can be "
                                "re-run — cancel it first")
        old_ctx = RunContext.objects.select_for_update().get(run=old)
        new = run_rerun(old=old, old_ctx=old_ctx, stage=stage)
        request_id = _request_id()
        if request_id:  # the operator's request that asked for the re-run, as run_create keeps it
            Run.objects.filter(pk=new.pk).update(request_id=request_id)
    logger.info("run re-run", extra={"run_id": str(new.pk), "rerun_of": str(old.pk), "from_stage": stage})
    new.refresh_from_db()
    return new
