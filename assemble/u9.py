"""U9 Assemble (seed 000): evidence → a bounded prompt context with provenance, under an exact token budget.

Meta-triage picks and orders the evidence channels; each channel has its own cap (profile × mode share), and the
share of a channel with nothing to give (no history, no memory, documents not probed) is split among the channels
in use by their triage scores — the multi-signal weights — so it goes to law on a law question instead of being
lost (seed 000 "budget allocation … згідно U9_BUDGET_PROFILE і multi-signal weights"). Within
a channel top-ranked snippets stay whole; a lower one that does not fit is cut at a sentence boundary, or dropped
when the room left is too small to say anything. Counts are exact and each paragraph is encoded once
(``assemble/seams.py``): a candidate is counted only up to the paragraph that overflows its channel, a cut one reuses
the paragraphs before the cut, and the context's total is summed from the blocks' pieces. Only keys and counts are
kept (``IncludedSnippet``): the texts stay in the snippet store."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import partial

from assemble.budgets import MIN_USEFUL_TOKENS, AssembleConfig, Budget, budget_for
from assemble.prompt import SourceBlock, render_kb_context, render_source
from assemble.seams import PieceCounter
from assemble.triage import CHANNEL_OF_SOURCE, LAW, SHARE_KEY, Triage, triage_deterministic
from pipeline.contracts import (
    AssembledPrompt,
    BudgetTokens,
    CoverageGap,
    EvidenceAssembly,
    EvidenceItem,
    IncludedSnippet,
    LawSourceRef,
    PromptBudget,
    PromptMeta,
    QueryProfile,
    SearchPlan,
)

TokenCounter = Callable[[str], int]
_SENTENCE = re.compile(r"(?<=[.;:!?])\s+|\n+")


MIN_OVERLAP_CHARS = 20  # a shorter common edge is a coincidence, not the chunker's overlap
MAX_OVERLAP_CHARS = 400  # the chunker repeats at most CHUNK_OVERLAP_CHARS (150 by default)


def _without_overlap(previous: str, part: str) -> str:
    """Chunks of one article repeat the tail of the previous chunk (CHUNK_OVERLAP_CHARS) so each reads on its own;
    joined back together, the repeat is dropped (tokens the writer would read twice)."""
    for size in range(min(len(previous), len(part) - 1, MAX_OVERLAP_CHARS), MIN_OVERLAP_CHARS - 1, -1):
        if previous.endswith(part[:size]):
            return part[size:].lstrip()
    return part


def snippet_text(keys: list[str], texts: dict[str, str]) -> str | None:
    parts = [texts[k] for k in keys if k in texts]
    if not parts:
        return None
    joined = [parts[0]]
    for part in parts[1:]:
        rest = _without_overlap(joined[-1], part)
        if rest:
            joined.append(rest)
    return "\n".join(joined)


def build_blocks(snippets: list[IncludedSnippet], texts: dict[str, str]) -> list[SourceBlock]:
    """The same blocks U9 measured, rebuilt from storage (U10 reloads them: texts are never in the DB)."""
    blocks = []
    for s in snippets:
        text = snippet_text(s.r2_keys, texts)
        if text is None or s.article_ref is None:
            continue
        if s.truncated_to_chars is not None:
            text = text[: s.truncated_to_chars]
        blocks.append(SourceBlock(s.article_ref, s.r2_key, s.heading, text, s.source))
    return blocks


def _cut_to_fit(text: str, block_of: Callable[[str], SourceBlock], room: int, count: PieceCounter
                ) -> tuple[str, int] | None:
    """The longest sentence prefix whose block fits in ``room`` tokens, from per-sentence counts; the cut block's
    exact count reuses the paragraphs before the cut."""
    if room < MIN_USEFUL_TOKENS:
        return None  # ``used`` below never exceeds ``room`` and must reach MIN_USEFUL_TOKENS: nothing can fit
    sentences = [s for s in _SENTENCE.split(text) if s.strip()]
    overhead = count(render_source(block_of("")))
    used, end = overhead, 0
    pos = 0
    for s in sentences:
        cost = count(s) + 1
        if used + cost > room:
            break
        used += cost
        pos = text.find(s, pos) + len(s)
        end = pos
    if end == 0 or used < MIN_USEFUL_TOKENS:
        return None
    cut = text[:end]
    return cut, count(render_source(block_of(cut)))


def channel_rooms(budget: Budget, channels: Sequence[str], scores: Mapping[str, float]) -> dict[str, int]:
    """Tokens per evidence channel: the mode's caps for the channels in use (``channels``, triage's order), and
    the caps of the others split among them in proportion to their triage scores (equally if all score 0); the
    rounding remainder goes to the channel used first. A channel the mode gives no share (an operator's 0 in
    ``U9_MODE_SHARES``) takes none of the freed room either."""
    base = {LAW: budget.law, "memory": budget.memory, "docs": budget.doc, "history": budget.history}
    used = [c for c in channels if c in base and base[c] > 0]
    freed = sum(v for c, v in base.items() if c not in used)
    if not used or freed <= 0:
        return base
    weights = {c: max(float(scores.get(c, 0.0)), 0.0) for c in used}
    total = sum(weights.values())
    if total <= 0:
        weights, total = dict.fromkeys(used, 1.0), float(len(used))
    room = {c: (v if c in used else 0) for c, v in base.items()}
    given = 0
    for c in used:
        extra = int(freed * weights[c] / total)
        room[c] += extra
        given += extra
    room[used[0]] += freed - given
    return room


def _label(item: EvidenceItem) -> str | None:
    """What a block is called in ``<source ref=...>``: the article for law, a stable handle for the rest."""
    if item.source == "lldbi":
        return item.article_ref
    return item.label or f"{item.source}:{item.rank}"


def _chosen(evidence: EvidenceAssembly, triage: Triage, warnings: list[str]) -> list[EvidenceItem]:
    """The items of the channels triage uses, in its channel order then by rank; a channel it leaves out is
    warned about once."""
    order = {channel: i for i, channel in enumerate(triage.channels)}
    skipped = sorted({CHANNEL_OF_SOURCE[i.source] for i in evidence.items} - set(order))
    warnings.extend(f"channel_skipped:{channel}" for channel in skipped)
    return sorted((i for i in evidence.items if CHANNEL_OF_SOURCE[i.source] in order),
                  key=lambda i: (order[CHANNEL_OF_SOURCE[i.source]], i.rank))


def _fit(item: EvidenceItem, label: str, texts: dict[str, str], room: int, count: PieceCounter,
         warnings: list[str]) -> tuple[SourceBlock, IncludedSnippet] | None:
    """The item's block within ``room`` tokens — whole, or cut at a sentence end — and what is kept of it; None
    when its texts did not load or too little of it fits (each with its warning)."""
    text = snippet_text(item.r2_keys, texts)
    if text is None:
        warnings.append(f"evidence_excluded:{label}")
        return None
    first_key = next(k for k in item.r2_keys if k in texts)
    block_of = partial(SourceBlock, label, first_key, item.heading, source=item.source)
    block = block_of(text)
    tokens = count.at_most(render_source(block), room)
    truncated: int | None = None
    if tokens is None:  # over the room: counted only up to the paragraph that overflows it
        cut = _cut_to_fit(text, block_of, room, count)
        if cut is None:
            warnings.append(f"dropped_over_budget:{label}")
            return None
        text, tokens = cut
        truncated = len(text)
        block = block_of(text)
    return block, IncludedSnippet(source=item.source, r2_key=first_key, r2_keys=[k for k in item.r2_keys if k in texts],
                                  article_ref=label, heading=item.heading, rank=item.rank, tokens=tokens,
                                  chars=len(text), truncated_to_chars=truncated)


def _law_refs(evidence: EvidenceAssembly, snippets: list[IncludedSnippet]) -> list[LawSourceRef]:
    scores = {i.article_ref: i.score for i in evidence.items if i.source == "lldbi"}
    return [LawSourceRef(article_ref=s.article_ref or "", r2_key=s.r2_key, score=scores[s.article_ref])
            for s in snippets if s.source == "lldbi" and s.article_ref in scores]


def _chars(snippets: list[IncludedSnippet]) -> PromptBudget:
    def chars(source: str) -> int:
        return sum(s.chars for s in snippets if s.source == source)

    return PromptBudget(law_chars=chars("lldbi"), memory_chars=chars("memory"), doc_chars=chars("doc"),
                        history_chars=chars("history"))


def assemble_prompt(
    *,
    evidence: EvidenceAssembly,
    profile: QueryProfile,
    plan: SearchPlan,
    texts: dict[str, str],
    load_warnings: list[str],
    budget_profile: str,
    tokenizer_id: str,
    count: TokenCounter,
    now: datetime,
    coverage_gap: CoverageGap | None = None,
    triage: Triage | None = None,
    config: AssembleConfig | None = None,
) -> tuple[AssembledPrompt, list[SourceBlock]]:
    budget = budget_for(budget_profile, profile.mode, config)
    cfg = config or AssembleConfig()
    if triage is None:
        triage = triage_deterministic(profile=profile, plan=plan, evidence=evidence, weights=cfg.signal_weights,
                                      shares=cfg.mode_shares)
    warnings = list(load_warnings)
    pieces = PieceCounter(count)  # one memo per assembly: every candidate paragraph is encoded at most once
    room = channel_rooms(budget, triage.channels, triage.scores)
    allotted = dict(room)
    snippets: list[IncludedSnippet] = []
    blocks: list[SourceBlock] = []
    for item in _chosen(evidence, triage, warnings):
        label = _label(item)
        channel = CHANNEL_OF_SOURCE[item.source]
        fitted = _fit(item, label, texts, room[channel], pieces, warnings) if label is not None else None
        if fitted is None:
            continue
        block, snippet = fitted
        room[channel] -= snippet.tokens
        blocks.append(block)
        snippets.append(snippet)
    # exact: the blocks' pieces are counted already; only the joins and the kb_context markup are new
    kb_tokens = pieces(render_kb_context(blocks, coverage_gap))
    used = {CHANNEL_OF_SOURCE[s.source] for s in snippets}
    meta = _meta(profile=profile, plan=plan, budget=budget, triage=triage, allotted=allotted, now=now,
                 channels_used=[c for c in triage.channels if c in used], total_tokens_est=kb_tokens,
                 warnings=warnings, tokenizer_id=tokenizer_id)
    prompt = AssembledPrompt(meta=meta, law_source_refs=_law_refs(evidence, snippets), budget=_chars(snippets),
                             snippets=snippets)
    return prompt, blocks


def _meta(*, profile: QueryProfile, plan: SearchPlan, budget: Budget, triage: Triage, allotted: Mapping[str, int],
          now: datetime, channels_used: list[str], total_tokens_est: int, warnings: list[str],
          tokenizer_id: str) -> PromptMeta:
    """Seed 000's meta, then ours; the layered path adds its own keys at U9's adapter."""
    meta = PromptMeta(
        mode=profile.mode, budget_profile=budget.profile, total_tokens_est=total_tokens_est,
        channels_used=channels_used, triage_model=triage.model, assembled_at=now.isoformat(), warnings=warnings,
        tokenizer=tokenizer_id,
        budget_tokens=BudgetTokens(total=budget.total_tokens, law=budget.law, memory=budget.memory,
                                   doc=budget.doc, history=budget.history),
        # what each channel could actually spend, unused channels' shares split by the triage scores
        channel_budget_tokens={SHARE_KEY[c]: v for c, v in allotted.items()},
        docs_probe=plan.docs_probe, assembler="legacy",
        triage_scores=dict(triage.scores), triage_skipped=dict(triage.skipped))
    if triage.fallback is not None:  # absent, not null, when the requested model decided
        meta = meta.model_copy(update={"triage_fallback": triage.fallback})
    return meta
