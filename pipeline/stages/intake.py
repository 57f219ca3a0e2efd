"""U1 Intake: validate and normalise the question; the specialist and flags arrive resolved from the shell."""

from __future__ import annotations

from datetime import datetime

from legaltext.text import normalize, unmixed
from pipeline.contracts import Intake, SpecialistProfile


class IntakeError(ValueError):
    pass


def intake(*, question: str, specialist: SpecialistProfile, max_chars: int, now: datetime) -> Intake:
    normalized = unmixed(normalize(question))  # «звiльнити» typed with a Latin «i» is «звільнити»
    if not normalized:
        raise IntakeError("the question is empty")
    if len(normalized) > max_chars:
        raise IntakeError(f"the question is {len(normalized)} characters; the limit is {max_chars}")
    return Intake(question=question, normalized=normalized, specialist=specialist, received_at=now.isoformat())
