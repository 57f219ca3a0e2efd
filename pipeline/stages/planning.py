"""U3 Planning: which searches to run, with which act filters and channels. Pure."""

from __future__ import annotations

import re

from pipeline.contracts import QueryProfile, SearchPlan, SearchStep

# "Що означає термін «X»?", "Що таке X?", "визначення поняття «X»": Ukrainian acts define their terms in an
# article headed "Визначення термінів" (or "Терміни та їх визначення"), one sentence per term among dozens, so
# the whole question's words (означає, законодавство …) drown the term. The definition step searches for the term
# next to the words of such a heading.
_DEFINITION = re.compile(
    r"(?:означа\w*|визначенн\w*|поняття|термін\w*|що\s+таке)\s+(?:термін\w*\s+|поняття\s+)?"
    r"[«\"„“']\s*(?P<term>[^»\"”']{2,120}?)\s*[»\"”']", re.I)
DEFINITION_HEADING = "визначення термінів"


def definition_term(question: str) -> str | None:
    m = _DEFINITION.search(question)
    return m.group("term").strip() if m else None


def plan_search(*, question: str, profile: QueryProfile, top_k: int,
                extra_queries: tuple[str, ...] = (), extra_acts: tuple[str, ...] = ()) -> SearchPlan:
    indexed_acts = [c.nreg for c in profile.act_hints if c.indexed] + [a for a in extra_acts]
    indexed_acts = list(dict.fromkeys(indexed_acts))
    steps: list[SearchStep] = []
    for ref in profile.article_refs:
        acts = [ref.act_nreg] if ref.act_nreg else indexed_acts
        steps.append(SearchStep(kind="exact_article", query=ref.matched, act_filter=acts, article=ref.article,
                                limit=top_k))
    term = definition_term(question)
    if term:  # the definition step leads; the whole question follows as a smaller guard
        steps.append(SearchStep(kind="hybrid", query=f"{term} {DEFINITION_HEADING}", act_filter=indexed_acts,
                                limit=top_k))
    steps.append(SearchStep(kind="hybrid", query=question, act_filter=indexed_acts,
                            limit=max(top_k // 2, 3) if term else top_k))
    if indexed_acts and not profile.article_refs:
        # A named act narrows the search; a smaller unfiltered pass guards against a wrongly named act.
        steps.append(SearchStep(kind="hybrid", query=question, act_filter=[], limit=max(top_k // 2, 3)))
    for q in extra_queries:
        steps.append(SearchStep(kind="hybrid", query=q, act_filter=indexed_acts, limit=top_k))
    channels = ["lldbi_chunks"] if profile.law_only else ["lldbi_chunks", "docs"]
    return SearchPlan(steps=steps, channels=channels, docs_probe=not profile.law_only)
