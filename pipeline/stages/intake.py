"""U1 Intake: validate and normalise the question; the specialist and flags arrive resolved from the shell."""

from __future__ import annotations

from datetime import datetime

from legaltext.text import as_question, mended, normalize, ukrainian_words, unmixed, without_courtesies
from pipeline.contracts import Intake, SpecialistProfile


class IntakeError(ValueError):
    pass


def intake(*, question: str, specialist: SpecialistProfile, max_chars: int, now: datetime) -> Intake:
    # «звiльнити» typed with a Latin «i» is «звільнити»; a slip is mended («поясненя» → «пояснення») for every stage
    # after U1, the model that embeds the question among them: eval/natural dev with two slips a question (bench,
    # session 41) hit@10 0.883 → 0.918, cited gold 0.732 → 0.809; dev as typed unchanged. The greeting and the thanks
    # around a question are not asked: dev opened with «Доброго дня! Підкажіть, будь ласка.» and closed with «Дякую!»
    # hit@1 0.685 → 0.661, cited gold 0.841 → 0.821 (two wrong answers `strong`); without them as typed plainly.
    # Russian and surzhyk forms (legaltext/surzhyk.tsv) are read in Ukrainian first, so that no slip-mending turns
    # «отпуска» into «опуска»: ten such questions cited gold 0.4 → 0.6
    normalized = mended(ukrainian_words(without_courtesies(unmixed(normalize(question)))))
    if not normalized:
        raise IntakeError("the question is empty")
    if len(normalized) > max_chars:
        raise IntakeError(f"the question is {len(normalized)} characters; the limit is {max_chars}")
    # begun with a capital and ended with «?» where typed without (after the limit: the mark is ours): dev typed in
    # lower case without punctuation hit@1 0.685 → 0.650, hit@10 0.946 → 0.930; read as a question 0.677 / 0.957
    return Intake(question=question, normalized=as_question(normalized), specialist=specialist,
                  received_at=now.isoformat())
