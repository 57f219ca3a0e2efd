"""Conversation history: the delivered turns of earlier runs of the same org, end user and ``conversation_id``.
Reads only (the text of a turn is materialised for the prompt by the channel port, not here)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pipeline.context import RunDocument
from runs.models import Run


@dataclass(frozen=True)
class HistoryTurn:
    run_id: str
    question: str
    answer: str
    created_at: datetime


def conversation_turns(*, org_id: int, user_ref: str, conversation_id: str, before: datetime,
                       exclude_run_id: str, limit: int) -> list[HistoryTurn]:
    """The newest ``limit`` finished turns before ``before``, newest first. A conversation is scoped to its user:
    another user of the org who sends the same ``conversation_id`` starts a conversation of their own."""
    if not conversation_id or limit <= 0:
        return []
    runs = (Run.objects.filter(org_id=org_id, user_ref=user_ref, conversation_id=conversation_id,
                               status=Run.Status.DONE, created_at__lt=before)
            .exclude(pk=exclude_run_id).select_related("context").order_by("-created_at")[:limit])
    turns = []
    for run in runs:
        answer = RunDocument.parse(run.context.document).visible().answer if hasattr(run, "context") else None
        if answer is not None and answer.text.strip():
            turns.append(HistoryTurn(str(run.pk), run.question, answer.text, run.created_at))
    return turns
