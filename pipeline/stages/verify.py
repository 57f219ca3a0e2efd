"""U11 Verify: every citation in the draft, in whatever form the writer wrote it, must name an article of the
assembled evidence (``assembled_prompt.lawSourceRefs``). Mechanical and pure.

Statuses: ``supported`` (the article is in the evidence), ``not_in_evidence`` (a real act of the catalog, but not an
article the writer was given, or an act the coverage gap says is not indexed), ``unknown_act`` (an act the catalog
does not know, or a mention that names no act and matches no single evidence article), ``user_material`` (a line
citing the article repeats ``USER_TEXT_RUN_WORDS`` words in a row of the user's documents, memory or earlier turns
that no law source holds: the user's text attributed to the article). Anything but supported makes the verdict
``retry_write``, and so does a draft that never names an act the coverage gap declares; ORCH bounds the retries,
and U12 removes what is still unsupported and appends the gap's sentence."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from pipeline.citations import FoundCitation, citation_key, citation_keys, find_citations
from pipeline.contracts import AssembledPrompt, CitationCheck, CoverageGap, Draft, VerifyResult
from pipeline.coverage import act_name, unnamed_acts

NO_CITATIONS = "draft cites nothing although evidence exists"
GAP_NOT_NAMED = "coverage_gap_not_named"

# Eight words in a row: long enough that a phrase of ordinary legal language ("у разі порушення умов трудового
# договору") shared by a contract and a code is rarely all of it, short enough to catch a quoted clause.
USER_TEXT_RUN_WORDS = 8
_WORD = re.compile(r"\w+")


def _runs(text: str, cited: Callable[[str], list[FoundCitation]], n: int = USER_TEXT_RUN_WORDS
          ) -> set[tuple[str, ...]]:
    """Runs of ``n`` words, never across an article mention: "… робочий рік (КЗпП ст. 75)" quoted from an earlier
    answer is the law's sentence plus our citation, not a user's words."""
    runs: set[tuple[str, ...]] = set()
    start = 0
    for c in [*cited(text), None]:
        words = _WORD.findall(text[start:c.start if c else len(text)].lower())
        runs.update(tuple(words[i:i + n]) for i in range(len(words) - n + 1))
        start = c.end if c else start
    return runs


def user_text_lines(draft_text: str, *, user_texts: Sequence[str], law_texts: Sequence[str],
                    cited: Callable[[str], list[FoundCitation]]) -> list[tuple[int, int]]:
    """The (start, end) of each line of the draft that repeats a run of words found in the user's material and in
    no law source."""
    if not user_texts:
        return []
    only_user = (set().union(*(_runs(t, cited) for t in user_texts))
                 - set().union(*(_runs(t, cited) for t in law_texts)))
    spans, start = [], 0
    for line in draft_text.split("\n"):
        if only_user and _runs(line, cited) & only_user:
            spans.append((start, start + len(line)))
        start += len(line) + 1
    return spans


def evidence_refs(prompt: AssembledPrompt) -> list[str]:
    return [r.article_ref for r in prompt.law_source_refs]


def citation_status(c: FoundCitation, *, evidence: set[tuple[str, str]], missing_acts: set[str]) -> str:
    if c.act_nreg is None and c.how != "evidence":
        return "unknown_act"
    if citation_key(c) in evidence and (c.act_nreg or "").lower() not in missing_acts:
        return "supported"
    return "not_in_evidence"


def verify(draft: Draft, prompt: AssembledPrompt, labels: Mapping[str, str], coverage_gap: CoverageGap | None,
           *, titles: Mapping[str, str] | None = None, user_texts: Sequence[str] = (),
           law_texts: Sequence[str] = ()) -> VerifyResult:
    """``user_texts`` / ``law_texts``: the texts of the prompt's documents and memory items, and of its law
    snippets, to catch a user's words cited as an article's."""
    refs = evidence_refs(prompt)
    evidence = citation_keys(refs, labels)
    missing_acts = {a.nreg.lower() for a in (coverage_gap.acts if coverage_gap else []) if a.nreg}
    posing = user_text_lines(draft.text, user_texts=user_texts, law_texts=law_texts,
                             cited=lambda t: find_citations(t, labels, titles=titles, evidence=refs))
    checks: dict[str, CitationCheck] = {}
    for c in find_citations(draft.text, labels, titles=titles, evidence=refs):
        status = citation_status(c, evidence=evidence, missing_acts=missing_acts)
        if status == "supported" and any(start <= c.start < end for start, end in posing):
            status = "user_material"
        if c.article_ref not in checks or (status != "supported" and checks[c.article_ref].status == "supported"):
            checks[c.article_ref] = CitationCheck(article_ref=c.article_ref, status=status)  # type: ignore[arg-type]
    bad = [c for c in checks.values() if c.status != "supported"]
    notes = [f"{c.status}: {c.article_ref}" for c in bad]
    if not checks and refs:
        notes.append(NO_CITATIONS)
    # A declared gap the draft never names is an answer that hides what it could not consult (seed 002).
    unnamed = unnamed_acts(draft.text, coverage_gap)
    notes += [f"{GAP_NOT_NAMED}: {act_name(a)}" for a in unnamed]
    verdict = "retry_write" if bad or (not checks and refs) or unnamed else "complete"
    return VerifyResult(verdict=verdict, citations=list(checks.values()),  # type: ignore[arg-type]
                        coverage_gap=coverage_gap, notes=notes)
