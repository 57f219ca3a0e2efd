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
    r"(?:«\s*(?P<guillemets>[^»]{2,120}?)\s*»|[\"„“']\s*(?P<term>[^\"”']{2,120}?)\s*[\"”'])", re.I)
DEFINITION_HEADING = "визначення термінів"


# Unquoted: "Що таке спадщина?", "Що означає поворот виконання рішення за ЦПК?" — a short phrase without numbers
# (a longer one is a question about a situation, not about a term).
_UNQUOTED = re.compile(
    r"^\s*(?:що\s+(?:таке|означає|означа[ює]ться|розуміють|розуміється\s+під)|як(?:е|ий)\s+визначення|"
    r"визначення\s+(?:терміну|термін|поняття))\s+(?:термін\w*\s+|поняття\s+)?"
    r"(?P<term>[^?«»\"\d,;]{2,80}?)\s*(?:\?|$|\s+(?:у|в|за|згідно)\s)", re.I)
UNQUOTED_TERM_MAX_WORDS = 6
_NOT_A_TERM_START = frozenset("для у в на з із зі до від про при по за мені мене мій моя моє мої цей ця це ці "
                              "його її їх нас вас він вона вони я ми ви".split())


def definition_term(question: str) -> str | None:
    m = _DEFINITION.search(question)
    if m:
        return (m.group("guillemets") or m.group("term")).strip()
    m = _UNQUOTED.search(question)
    if m is None:
        return None
    term = m.group("term").strip()
    first = term.split()[0].lower() if term.split() else ""
    if len(term.split()) > UNQUOTED_TERM_MAX_WORDS or first in _NOT_A_TERM_START:
        return None
    return term


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
    if term:  # the definition steps lead (the term as defined, then near it); the whole question follows
        steps.append(SearchStep(kind="definition", query=term, act_filter=indexed_acts, limit=top_k))
        steps.append(SearchStep(kind="hybrid", query=f"{term} {DEFINITION_HEADING}", act_filter=indexed_acts,
                                limit=top_k))
    steps.append(SearchStep(kind="hybrid", query=question, act_filter=indexed_acts,
                            limit=max(top_k // 2, 3) if term else top_k))
    if indexed_acts and not profile.article_refs:
        # A named act narrows the search; a smaller unfiltered pass guards against a wrongly named act.
        steps.append(SearchStep(kind="hybrid", query=question, act_filter=[], limit=max(top_k // 2, 3)))
    for q in extra_queries:
        steps.append(SearchStep(kind="hybrid", query=q, act_filter=indexed_acts, limit=top_k))
    # the record of what U7 may search besides law (history depends on the run, not the question: U7 decides it)
    channels = ["lldbi_chunks"] if profile.law_only else ["lldbi_chunks", "docs"]
    if profile.mode in ("mixed", "memory"):
        channels.append("memory")
    return SearchPlan(steps=steps, channels=channels, docs_probe=not profile.law_only)
