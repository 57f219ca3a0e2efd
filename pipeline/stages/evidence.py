"""U7 Evidence assembly: hits grouped per article, ranked, with provenance. Pure."""

from __future__ import annotations

from pipeline.contracts import EvidenceAssembly, EvidenceItem, RawHits, SupportLevel


def assemble_evidence(hits: RawHits, *, support_level: SupportLevel, max_items: int,
                      excluded_acts: frozenset[str] = frozenset(), bound_acts: frozenset[str] = frozenset()
                      ) -> EvidenceAssembly:
    groups: dict[str, list] = {}
    for h in hits.hits:
        if h.act_nreg.lower() in excluded_acts:
            continue
        if bound_acts and h.act_nreg.lower() not in bound_acts:
            continue
        groups.setdefault(h.article_ref, []).append(h)
    ranked = sorted(groups.values(), key=lambda hs: (max(x.score for x in hs), len(hs)), reverse=True)
    items = []
    for rank, hs in enumerate(ranked[:max_items], start=1):
        first = hs[0]
        chunks = sorted({h.ordinal: h.r2_key for h in hs}.items())
        items.append(EvidenceItem(source="lldbi", rank=rank, score=round(max(h.score for h in hs), 6),
                                  act_nreg=first.act_nreg, act_label=first.act_label, article=first.article,
                                  article_ref=first.article_ref, heading=first.heading,
                                  r2_keys=[k for _, k in chunks], channels=sorted({h.channel for h in hs})))
    level: SupportLevel = support_level if items else "none"
    return EvidenceAssembly(items=items, support_level=level, dropped=max(len(ranked) - max_items, 0))
