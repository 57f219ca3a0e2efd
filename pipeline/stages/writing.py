"""U10 Writer: the answer from the assembled sources, through the LLM port. Pure given the port."""

from __future__ import annotations

from collections.abc import Callable

from assemble.prompt import SourceBlock, legacy_messages
from llm.types import Completion, Message
from pipeline.citations import find_citations
from pipeline.contracts import Citation, CoverageGap, Draft, SpecialistProfile

CompleteFn = Callable[[list[Message]], Completion]


def write(*, profile: SpecialistProfile, blocks: list[SourceBlock], question: str,
          coverage_gap: CoverageGap | None, complete: CompleteFn, labels: dict[str, str], provider: str,
          attempt: int, system_override: str | None = None) -> tuple[Draft, list[Message]]:
    messages = legacy_messages(profile=profile, blocks=blocks, question=question, coverage_gap=coverage_gap)
    if system_override is not None:
        messages = [Message("system", system_override), *messages[1:]]
    completion = complete(messages)
    found = find_citations(completion.text, labels)
    seen: dict[str, Citation] = {}
    for c in found:
        seen.setdefault(c.article_ref, Citation(article_ref=c.article_ref, act_nreg=c.act_nreg, article=c.article))
    draft = Draft(text=completion.text, citations=list(seen.values()), provider=provider, model=completion.model,
                  attempt=attempt)
    return draft, messages
