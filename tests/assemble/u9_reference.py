"""The slow reference for U9's choices and totals: assemble/u9.py's counting as it was before issue 15, item 5 —
every candidate counted whole, a cut one per sentence and once more after the cut, then the whole rendered context
once more. test_u9_fast_counts.py holds the fast path to exactly this output. Frozen: do not optimise it; the
helpers it imports (channel split, ordering, labels, meta) do no counting."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial

from assemble.budgets import MIN_USEFUL_TOKENS, AssembleConfig, budget_for
from assemble.prompt import SourceBlock, render_kb_context, render_source
from assemble.triage import CHANNEL_OF_SOURCE, triage_deterministic
from assemble.u9 import _SENTENCE, _chars, _chosen, _label, _law_refs, _meta, channel_rooms, snippet_text
from pipeline.contracts import (
    AssembledPrompt,
    CoverageGap,
    EvidenceAssembly,
    EvidenceItem,
    IncludedSnippet,
    QueryProfile,
    SearchPlan,
)

TokenCounter = Callable[[str], int]


def _cut_to_fit(text: str, block_of: Callable[[str], SourceBlock], room: int, count: TokenCounter
                ) -> tuple[str, int] | None:
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


def _fit(item: EvidenceItem, label: str, texts: dict[str, str], room: int, count: TokenCounter,
         warnings: list[str]) -> tuple[SourceBlock, IncludedSnippet] | None:
    text = snippet_text(item.r2_keys, texts)
    if text is None:
        warnings.append(f"evidence_excluded:{label}")
        return None
    first_key = next(k for k in item.r2_keys if k in texts)
    block_of = partial(SourceBlock, label, first_key, item.heading, source=item.source)
    block = block_of(text)
    tokens = count(render_source(block))
    truncated: int | None = None
    if tokens > room:
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


def assemble_prompt_reference(*, evidence: EvidenceAssembly, profile: QueryProfile, plan: SearchPlan,
                              texts: dict[str, str], budget_profile: str, count: TokenCounter, now: datetime,
                              coverage_gap: CoverageGap | None = None, config: AssembleConfig | None = None
                              ) -> tuple[AssembledPrompt, list[SourceBlock]]:
    budget = budget_for(budget_profile, profile.mode, config)
    cfg = config or AssembleConfig()
    triage = triage_deterministic(profile=profile, plan=plan, evidence=evidence, weights=cfg.signal_weights,
                                  shares=cfg.mode_shares)
    warnings: list[str] = []
    room = channel_rooms(budget, triage.channels, triage.scores)
    allotted = dict(room)
    snippets: list[IncludedSnippet] = []
    blocks: list[SourceBlock] = []
    for item in _chosen(evidence, triage, warnings):
        label = _label(item)
        channel = CHANNEL_OF_SOURCE[item.source]
        fitted = _fit(item, label, texts, room[channel], count, warnings) if label is not None else None
        if fitted is None:
            continue
        block, snippet = fitted
        room[channel] -= snippet.tokens
        blocks.append(block)
        snippets.append(snippet)
    kb_tokens = count(render_kb_context(blocks, coverage_gap))
    used = {CHANNEL_OF_SOURCE[s.source] for s in snippets}
    meta = _meta(profile=profile, plan=plan, budget=budget, triage=triage, allotted=allotted, now=now,
                 channels_used=[c for c in triage.channels if c in used], total_tokens_est=kb_tokens,
                 warnings=warnings, tokenizer_id="reference")
    return AssembledPrompt(meta=meta, law_source_refs=_law_refs(evidence, snippets), budget=_chars(snippets),
                           snippets=snippets), blocks
