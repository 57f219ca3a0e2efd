"""The shadow compare before switching a specialist on: a run's writer prompt with the flag OFF (legacy) and ON
(layered), rebuilt from its stored refs by ``assemble.selectors.run_writer_prompt``; the run is not changed. The run
page, the compare's admin page and ``manage.py prompt_diff`` show it."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from assemble.layers import PromptBudgetExceeded
from assemble.render import WriterPrompt
from assemble.selectors import run_writer_prompt
from knowledge.snippets import SnippetStore
from llm.types import Message
from pipeline.context import RunDocument
from runs.models import Run, RunContext


@dataclass(frozen=True)
class PromptDiff:
    legacy: WriterPrompt
    layered: WriterPrompt | None
    layered_error: str | None  # e.g. the never-truncate layers do not fit: what switching on would do
    took: str

    def unified(self) -> str:
        after = render_messages(self.layered.messages) if self.layered else [f"(layered: {self.layered_error})\n"]
        return "".join(difflib.unified_diff(render_messages(self.legacy.messages), after,
                                            fromfile="flag OFF (legacy)", tofile="flag ON (layered)"))


def render_messages(messages: list[Message]) -> list[str]:
    lines: list[str] = []
    for m in messages:
        lines.append(f"=== {m.role} ===\n")
        lines.extend(line + "\n" for line in m.content.split("\n"))
    return lines


def run_prompt_diff(*, run: Run, store: SnippetStore | None = None) -> PromptDiff:
    """Shadow compare: the run's prompt with the flag OFF and ON, from its stored refs, without changing it."""
    store = store or SnippetStore()
    legacy = run_writer_prompt(run=run, layered=False, store=store)
    try:
        layered: WriterPrompt | None = run_writer_prompt(run=run, layered=True, store=store)
        error = None
    except PromptBudgetExceeded as exc:
        layered, error = None, str(exc)
    prompt = RunDocument.parse(RunContext.objects.get(run_id=run.pk).document).visible().assembled_prompt
    took = prompt.meta.assembler if prompt else "legacy"
    return PromptDiff(legacy, layered, error, took)
