"""U11 Verify: every citation in the draft, in whatever form the writer wrote it, must name an article of the
assembled evidence (``assembled_prompt.lawSourceRefs``). Mechanical and pure.

Statuses: ``supported`` (the article is in the evidence), ``not_in_evidence`` (a real act of the catalog, but not an
article the writer was given, or an act the coverage gap says is not indexed), ``unknown_act`` (an act the catalog
does not know, or a mention that names no act and matches no single evidence article). Anything but supported
makes the verdict ``retry_write``, and so does a draft that never names an act the coverage gap declares; ORCH
bounds the retries, and U12 removes what is still unsupported and appends the gap's sentence."""

from __future__ import annotations

from collections.abc import Mapping

from pipeline.citations import FoundCitation, citation_key, citation_keys, find_citations
from pipeline.contracts import AssembledPrompt, CitationCheck, CoverageGap, Draft, VerifyResult
from pipeline.coverage import act_name, unnamed_acts

NO_CITATIONS = "draft cites nothing although evidence exists"
GAP_NOT_NAMED = "coverage_gap_not_named"


def evidence_refs(prompt: AssembledPrompt) -> list[str]:
    return [r.article_ref for r in prompt.law_source_refs]


def citation_status(c: FoundCitation, *, evidence: set[tuple[str, str]], missing_acts: set[str]) -> str:
    if c.act_nreg is None and c.how != "evidence":
        return "unknown_act"
    if citation_key(c) in evidence and (c.act_nreg or "").lower() not in missing_acts:
        return "supported"
    return "not_in_evidence"


def verify(draft: Draft, prompt: AssembledPrompt, labels: Mapping[str, str], coverage_gap: CoverageGap | None,
           *, titles: Mapping[str, str] | None = None) -> VerifyResult:
    refs = evidence_refs(prompt)
    evidence = citation_keys(refs, labels)
    missing_acts = {a["nreg"].lower() for a in (coverage_gap.acts if coverage_gap else []) if a.get("nreg")}
    checks: dict[str, CitationCheck] = {}
    for c in find_citations(draft.text, labels, titles=titles, evidence=refs):
        if c.article_ref not in checks:
            status = citation_status(c, evidence=evidence, missing_acts=missing_acts)
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
