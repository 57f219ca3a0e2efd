"""U11 Verify: every citation must name an article that is in the assembled evidence. Mechanical. Pure."""

from __future__ import annotations

from pipeline.citations import find_citations
from pipeline.contracts import AssembledPrompt, CitationCheck, CoverageGap, Draft, VerifyResult


def verify(draft: Draft, prompt: AssembledPrompt, labels: dict[str, str],
           coverage_gap: CoverageGap | None) -> VerifyResult:
    in_evidence = {r.article_ref for r in prompt.law_source_refs}
    missing_acts = {a["nreg"].lower() for a in (coverage_gap.acts if coverage_gap else [])}
    checks: dict[str, CitationCheck] = {}
    notes: list[str] = []
    for c in find_citations(draft.text, labels):
        if c.article_ref in checks:
            continue
        if c.act_nreg is None:
            status = "unknown_act"
        elif c.article_ref in in_evidence and c.act_nreg.lower() not in missing_acts:
            status = "supported"
        else:
            status = "not_in_evidence"
        checks[c.article_ref] = CitationCheck(article_ref=c.article_ref, status=status)  # type: ignore[arg-type]
    if not checks and in_evidence:
        notes.append("draft cites nothing although evidence exists")
    bad = [c for c in checks.values() if c.status != "supported"]
    verdict = "retry_write" if bad or (not checks and in_evidence) else "complete"
    return VerifyResult(verdict=verdict, citations=list(checks.values()), coverage_gap=coverage_gap,  # type: ignore[arg-type]
                        notes=notes)
