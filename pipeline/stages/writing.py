"""U10 Writer: the answer from the prompt U9 decided on, through the LLM port. Pure given the port.

The messages arrive built (``assemble.render``): legacy or layered, the writer sends them as they are, so what
was measured, recorded and replayed is what the model saw."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from legaltext.citations import basis_first, find_citations
from pipeline.contracts import Citation, Draft
from pipeline.messages import Completion, Message

CompleteFn = Callable[[list[Message]], Completion]


def write(*, messages: list[Message], complete: CompleteFn, labels: Mapping[str, str], provider: str,
          attempt: int) -> Draft:
    completion = complete(messages)
    seen: dict[str, Citation] = {}
    for c in basis_first(find_citations(completion.text, labels)):
        seen.setdefault(c.article_ref, Citation(article_ref=c.article_ref, act_nreg=c.act_nreg, article=c.article))
    return Draft(text=completion.text, citations=list(seen.values()), provider=provider, model=completion.model,
                 attempt=attempt)
