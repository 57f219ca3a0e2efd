"""U7 Evidence assembly: law hits grouped per article, ranked together with the user's memory, the user's
documents and the conversation's earlier turns, each item tagged with its provenance (``source``). Pure.

Scores of different channels are not on one scale (retrieval fusion for law, 0..1 for the others), so the joint
order compares each item's score relative to its channel's best, weighted by how much the question's mode leans
on that channel. Only ``lldbi`` items are law: they alone carry an article and can be cited."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.contracts import (
    ChannelHit,
    EvidenceAssembly,
    EvidenceItem,
    Hit,
    QueryProfile,
    RawHits,
    SearchPlan,
    SupportLevel,
)

# What a channel's best item is worth next to the best law article, by query mode (U2). A law question stands on
# articles; "що в моєму договорі …" (mixed) asks about the user's document first; a memory question about what
# the user said before. Earlier turns give context, rarely the answer.
SOURCE_PRIOR: dict[str, dict[str, float]] = {
    "law": {"lldbi": 1.0, "memory": 0.6, "doc": 0.6, "history": 0.5},
    "mixed": {"doc": 1.0, "lldbi": 0.9, "memory": 0.7, "history": 0.5},
    "memory": {"memory": 1.0, "doc": 0.8, "lldbi": 0.7, "history": 0.6},
}
SOURCE_ORDER = ("lldbi", "doc", "memory", "history")  # ties: law first


def channels_to_probe(profile: QueryProfile, plan: SearchPlan, *, has_user: bool, has_conversation: bool
                      ) -> tuple[str, ...]:
    """Which non-law channels U7 asks. Documents only when planning decided on a docs probe (DESIGN §3 rule 9:
    a law-only question never looks at documents); memory for mixed and memory questions; the conversation's
    earlier turns when planning put them in the plan (not for a self-contained law-only question: seed 001).
    Memory and documents belong to an end user: none without one."""
    wanted = []
    if has_user and plan.docs_probe:
        wanted.append("doc")
    if has_user and profile.mode in ("mixed", "memory"):
        wanted.append("memory")
    if has_conversation and "history" in plan.channels:
        wanted.append("history")
    return tuple(wanted)


def _law_items(hits: RawHits, *, excluded_acts: frozenset[str], bound_acts: frozenset[str]
               ) -> list[list[Hit]]:
    groups: dict[str, list[Hit]] = {}
    for h in hits.hits:
        if h.act_nreg.lower() in excluded_acts:
            continue
        if bound_acts and h.act_nreg.lower() not in bound_acts:
            continue
        groups.setdefault(h.article_ref, []).append(h)
    return sorted(groups.values(), key=lambda hs: (max(x.score for x in hs), len(hs)), reverse=True)


def _law_item(hs: list[Hit]) -> EvidenceItem:
    first = hs[0]
    # by record, then by ordinal: an amending act's two "Стаття 114" are one citation with two records' chunks
    chunks = sorted({(h.chunk_key.rsplit("#c", 1)[0], h.ordinal): h.r2_key for h in hs}.items())
    return EvidenceItem(source="lldbi", rank=0, score=round(max(h.score for h in hs), 6), act_nreg=first.act_nreg,
                        act_label=first.act_label, article=first.article, article_ref=first.article_ref,
                        heading=first.heading, r2_keys=[k for _, k in chunks], channels=sorted({h.channel for h in hs}))


def _channel_item(hit: ChannelHit) -> EvidenceItem:
    return EvidenceItem(source=hit.source, rank=0, score=round(hit.score, 6), label=hit.label, heading=hit.heading,
                        r2_keys=[hit.r2_key], channels=[hit.source])


def assemble_evidence(hits: RawHits, *, support_level: SupportLevel, max_items: int,
                      excluded_acts: frozenset[str] = frozenset(), bound_acts: frozenset[str] = frozenset(),
                      channel_hits: Sequence[ChannelHit] = (), mode: str = "law") -> EvidenceAssembly:
    """``max_items`` bounds the law articles; the channel ports bound their own candidates. Ranks run over all."""
    groups = _law_items(hits, excluded_acts=excluded_acts, bound_acts=bound_acts)
    law = [_law_item(hs) for hs in groups[:max_items]]
    others = [_channel_item(h) for h in channel_hits]
    prior = SOURCE_PRIOR.get(mode, SOURCE_PRIOR["law"])
    top_law = max((i.score for i in law), default=0.0) or 1.0

    def joint(pos_item: tuple[int, EvidenceItem]) -> tuple[float, int, int]:
        pos, item = pos_item
        relative = item.score / top_law if item.source == "lldbi" else min(max(item.score, 0.0), 1.0)
        return -prior.get(item.source, 0.0) * relative, SOURCE_ORDER.index(item.source), pos

    ordered = [item for _, item in sorted(enumerate([*law, *others]), key=joint)]
    items = [item.model_copy(update={"rank": rank}) for rank, item in enumerate(ordered, start=1)]
    # Support is about the law: a document or a memory can frame the answer but cannot ground a legal claim.
    level: SupportLevel = support_level if law else "none"
    return EvidenceAssembly(items=items, support_level=level, dropped=max(len(groups) - max_items, 0))
