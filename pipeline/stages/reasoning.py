"""U8 Legal reasoning: the issues the question raises, the norms that apply, and an outline of the conclusion.
Deterministic first version: the outline follows the evidence ranking, so the writer answers the main issue
from the strongest norm first."""

from __future__ import annotations

from pipeline.contracts import ApplicableNorm, EvidenceAssembly, LegalReasoning, QueryProfile

MAX_NORMS = 5


def reason(profile: QueryProfile, evidence: EvidenceAssembly) -> LegalReasoning:
    norms = []
    # Only law is a norm: a user's document or memory ranked above an article is context, not an applicable norm.
    law = [i for i in evidence.items if i.source == "lldbi"]
    for item in law[:MAX_NORMS]:
        if item.article_ref is None or item.act_nreg is None or item.article is None:
            continue
        if "exact" in item.channels:
            why = "названа в питанні"
        elif "definition" in item.channels:
            why = "визначає термін, про який питають"
        else:
            why = f"відповідає питанню (ранг {item.rank})"
        norms.append(ApplicableNorm(article_ref=item.article_ref, act_nreg=item.act_nreg, article=item.article,
                                    heading=item.heading, why=why))
    outline = [f"{n.article_ref}" + (f": {n.heading}" if n.heading else "") for n in norms]
    if not norms:
        outline = ["Норм, що відповідають питанню, у базі знань не знайдено: сказати про це прямо."]
    return LegalReasoning(issues=list(profile.goals), applicable_norms=norms, conclusion_outline=outline)
