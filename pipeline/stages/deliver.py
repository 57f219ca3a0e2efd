"""U12 Deliver: the final answer. Citations U11 could not support are removed, never delivered. Pure."""

from __future__ import annotations

from pipeline.citations import find_citations
from pipeline.contracts import Answer, Citation, CoverageGap, Draft, SupportLevel, VerifyResult

REMOVED = "[посилання вилучено: його немає серед доказів]"


def deliver(draft: Draft, result: VerifyResult, labels: dict[str, str], support_level: SupportLevel,
            coverage_gap: CoverageGap | None) -> Answer:
    bad = {c.article_ref for c in result.citations if c.status != "supported"}
    text = draft.text
    for c in sorted(find_citations(text, labels), key=lambda c: c.start, reverse=True):
        if c.article_ref in bad:
            text = text[: c.start] + REMOVED + text[c.end:]
    citations = [Citation(article_ref=c.article_ref, act_nreg=c.act_nreg, article=c.article)
                 for c in draft.citations if c.article_ref not in bad]
    level: SupportLevel = support_level
    if bad and level == "strong":
        level = "partial"
    if not citations:
        level = "none" if coverage_gap is None else "weak"
    return Answer(text=text, citations=citations, support_level=level, coverage_gap=coverage_gap,
                  removed_citations=sorted(bad))
