"""Reads for the assembler: the corrections a prompt uses, and a run's writer prompt rebuilt from its refs (the
console's OFF/ON compare, ``console/prompt_diff.py``, renders it both ways)."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings

from assemble.config import assemble_config, counter_for_encoding
from assemble.models import Correction
from assemble.render import CorrectionText, PromptSourcesMissing, WriterPrompt, writer_prompt_from_context
from knowledge.snippets import SnippetStore
from llm.tokenizer import DEFAULT_ENCODING
from pipeline.context import RunDocument
from runs.models import Run, RunContext


def _text(c: Correction) -> CorrectionText:
    return CorrectionText(id=c.pk, question=c.question, bad_answer=c.bad_answer, fixed_answer=c.fixed_answer)


def correction_list_active(*, specialist_id: int, limit: int) -> list[CorrectionText]:
    """The newest active corrections of a specialist, at most ``limit`` (PROMPT_CORRECTIONS_MAX)."""
    rows = Correction.objects.filter(specialist_id=specialist_id, active=True).order_by("-created_at", "-id")
    return [_text(c) for c in rows[:max(limit, 0)]]


def correction_list_for_run(*, run_id: str, limit: int) -> list[CorrectionText]:
    rows = Correction.objects.filter(specialist__runs__id=run_id, active=True).order_by("-created_at", "-id")
    return [_text(c) for c in rows[:max(limit, 0)]]


def correction_get_many(*, ids: Iterable[int]) -> list[CorrectionText]:
    """The corrections a run recorded, in the recorded order; ones deleted since are simply absent."""
    wanted = list(ids)
    found = {c.pk: c for c in Correction.objects.filter(pk__in=wanted)}
    return [_text(found[i]) for i in wanted if i in found]


def run_writer_prompt(*, run: Run, layered: bool | None = None, store: SnippetStore | None = None) -> WriterPrompt:
    """A run's writer prompt rebuilt from its RunContext and the snippet store — the path it took, or the other
    one for a shadow compare. Reads only: the run is not touched. Raises PromptSourcesMissing before U9."""
    ctx = RunDocument.parse(RunContext.objects.get(run_id=run.pk).document).visible()
    prompt = ctx.assembled_prompt
    if prompt is None:
        raise PromptSourcesMissing(f"run {run.pk} has no assembled prompt (status {run.status}, stage "
                                   f"{run.current_stage or '-'}): it did not reach U9")
    took_layered = prompt.meta.assembler == "layered"
    use_layered = took_layered if layered is None else layered
    if not use_layered:
        corrections: list[CorrectionText] = []
    elif took_layered:
        corrections = correction_get_many(ids=prompt.meta.correction_ids)
    else:  # a preview of switching on: what the specialist's corrections would add today
        corrections = correction_list_active(specialist_id=run.specialist_id, limit=settings.PROMPT_CORRECTIONS_MAX)
    texts, _ = (store or SnippetStore()).get_many([k for s in prompt.snippets for k in s.r2_keys])
    count = counter_for_encoding(prompt.meta.tokenizer or DEFAULT_ENCODING)
    return writer_prompt_from_context(ctx, texts=texts, corrections=corrections, count=count, layered=use_layered,
                                      config=assemble_config())
