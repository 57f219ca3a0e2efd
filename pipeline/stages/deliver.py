"""U12 Deliver: the final answer. Fail-closed: a citation is delivered only if U11 found it supported; every other
article mention — unsupported, unknown, or one U11 never saw — is cut out of the text, and the answer's support
drops to partial. A declared coverage gap the text still does not name gets its sentence appended, and an answer
from weak evidence says so. Pure."""

from __future__ import annotations

from collections.abc import Mapping

from legaltext.citations import FoundCitation, basis_first, find_citations
from pipeline.contracts import Answer, Citation, CoverageGap, Draft, SupportLevel, VerifyResult
from pipeline.coverage import NOTE_OPENING, WEAK_SUPPORT_NOTE, gap_sentences, unnamed_acts

REMOVED = "[посилання вилучено: його немає серед доказів]"


def _keep(c: FoundCitation, supported: set[str], refused: set[str]) -> bool:
    if c.article_ref not in supported:
        return False
    # A mention that names no act is placed by the evidence; if U11 could not place it, neither may U12.
    return not (c.how == "evidence" and c.bare_ref in refused)


def deliver(draft: Draft, result: VerifyResult, labels: Mapping[str, str], support_level: SupportLevel,
            coverage_gap: CoverageGap | None, *, titles: Mapping[str, str] | None = None) -> Answer:
    supported = {c.article_ref for c in result.citations if c.status == "supported"}
    refused = {c.article_ref for c in result.citations if c.status != "supported"}
    # Placing act-less mentions among the supported refs only gives the same answer U11 got from all the evidence
    # whenever U11 supported it, and nothing it did not (see _keep).
    found = find_citations(draft.text, labels, titles=titles, evidence=sorted(supported))
    mentions: dict[tuple[int, int], list[FoundCitation]] = {}
    for c in found:
        mentions.setdefault((c.start, c.end), []).append(c)
    text = draft.text
    kept: dict[str, Citation] = {}
    removed: set[str] = set()
    for (start, end), group in sorted(mentions.items(), reverse=True):
        good = [c for c in group if _keep(c, supported, refused)]
        removed.update(c.article_ref for c in group if c not in good)
        if len(good) < len(group):  # rewrite the mention: what survives in canonical form, then the marker
            survivors = ", ".join(dict.fromkeys(c.article_ref for c in good))
            text = text[:start] + (f"{survivors} " if survivors else "") + REMOVED + text[end:]
    for c in basis_first(found):
        if _keep(c, supported, refused):
            kept.setdefault(c.article_ref, Citation(article_ref=c.article_ref, act_nreg=c.act_nreg,
                                                    article=c.article))
    missing = unnamed_acts(text, coverage_gap)
    if coverage_gap is not None and missing:  # the write retries are spent and the draft still hides the gap
        text = "\n\n".join([text.rstrip(), *gap_sentences(coverage_gap, missing)])
    level: SupportLevel = support_level
    if removed and level == "strong":
        level = "partial"
    if not kept:
        level = "none" if coverage_gap is None else "weak"
    elif level == "weak" and coverage_gap is None and not text.lstrip().startswith(NOTE_OPENING):
        # read before the quotes it qualifies; a gap has its own sentence, and a draft that opens with a note of its
        # own («статті під номером 999 (КЗпП) серед знайдених норм немає …») has said why already — stacked, the two
        # told the reader the act was maybe not in the base when the question named one it holds
        text = "\n\n".join([WEAK_SUPPORT_NOTE, text.lstrip()])
    return Answer(text=text, citations=list(kept.values()), support_level=level, coverage_gap=coverage_gap,
                  removed_citations=sorted(removed))
