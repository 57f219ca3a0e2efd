"""The P3.1 layered prompt assembler (seed 004): layers in, ``{assembled_context, layer_manifest}`` out. Pure.

Order is priority: red_lines > crisis > directives > skill > soul > role > kb > correction > response_contract.
red_lines, crisis and soul are never truncated, and neither is response_contract: it is the runtime tail (the
specialist's answer format and the writer's citation rules), which seed 004 keeps outside the truncatable body —
a writer that lost its rules would cite freely. Every other layer is first held to its own token budget, capped
by what the never-truncated layers leave, then, while the whole is still over the total budget, the
lowest-priority truncatable layer gives way first. A layer
is cut by whole segments from its end — sentences for prose, lines for directives, whole ``<source>`` blocks for
kb — so what stays is always well formed. Absent layers are omitted. When the never-truncate layers alone exceed
the budget nothing is sent: ``PromptBudgetExceeded`` carries the counts.

Each segment is tokenized once and cuts are decided on those counts; the finished context is then counted exactly,
and the finished layers from the same pieces (``assemble/seams.py``: each paragraph encoded once). Joining text can
merge tokens across a seam, so the exact total is checked against the budget and, in the rare case it is still
over, one more segment goes (``MAX_FIT_PASSES``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from assemble.seams import PieceCounter
from pipeline.contracts import LayerManifestEntry, SegmentCount

PROMPT_ASSEMBLER_VERSION = 1
LayerId = Literal["red_lines", "crisis", "directives", "skill", "soul", "role", "kb", "correction",
                  "response_contract"]
LAYER_ORDER: tuple[LayerId, ...] = ("red_lines", "crisis", "directives", "skill", "soul", "role", "kb",
                                    "correction", "response_contract")
NEVER_TRUNCATE: frozenset[str] = frozenset({"red_lines", "crisis", "soul", "response_contract"})
LAYER_SEPARATOR = "\n\n"
# A seam between two joined texts can merge a token or two (BPE); one extra segment per pass covers it. Each pass
# re-counts only the finished context, and a handful is more than any real prompt has needed.
MAX_FIT_PASSES = 8

TokenCounter = Callable[[str], int]
_SENTENCE_END = re.compile(r"(?<=[.;:!?…])\s+|\n+")


class PromptBudgetExceeded(Exception):
    """The never-truncate layers alone do not fit the budget: sending the prompt would break a promise."""

    def __init__(self, *, budget_tokens: int, required_tokens: int, layer_tokens: Mapping[str, int],
                 what: str = "never-truncate layers") -> None:
        self.budget_tokens = budget_tokens
        self.required_tokens = required_tokens
        self.layer_tokens = dict(layer_tokens)
        parts = ", ".join(f"{k}={v}" for k, v in self.layer_tokens.items())
        super().__init__(f"{what} need {required_tokens} tokens but the prompt budget is {budget_tokens} ({parts})")


@dataclass(frozen=True)
class Layer:
    """One layer's text as ``head + joiner.join(segments) + tail``; only segments can be cut away."""

    id: LayerId
    segments: tuple[str, ...]
    head: str = ""
    joiner: str = ""
    tail: str = ""
    segment_refs: tuple[str, ...] = ()  # one per segment, kb (article refs) and correction (ids)
    segment_tokens: tuple[int, ...] | None = None  # counts known already (U9 measured the kb sources)

    def render(self, kept: int) -> str:
        body = self.joiner.join(self.segments[:kept])
        if kept < len(self.segments):
            body = body.rstrip()
        return f"{self.head}{body}{self.tail}"


def prose_layer(layer_id: LayerId, text: str | None, head: str = "") -> Layer | None:
    """A prose layer cut at sentence ends; the segments join back to exactly the original text."""
    text = (text or "").strip()
    if not text:
        return None
    segments, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        segments.append(text[start:m.end()])
        start = m.end()
    if start < len(text):
        segments.append(text[start:])
    return Layer(layer_id, tuple(segments), head=head)


@dataclass(frozen=True)
class AssembledLayers:
    assembled_context: str
    layer_manifest: list[LayerManifestEntry]
    total_tokens: int
    kept_refs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class _Work:
    layer: Layer
    priority: int
    seg_tokens: list[int]
    fixed_tokens: int  # head + tail, counted once
    joiner_tokens: int
    budget: int | None
    kept: int = 0

    @property
    def never(self) -> bool:
        return self.layer.id in NEVER_TRUNCATE

    def estimate(self, kept: int | None = None) -> int:
        k = self.kept if kept is None else kept
        if k == 0 and self.layer.segments:
            return 0
        return self.fixed_tokens + sum(self.seg_tokens[:k]) + self.joiner_tokens * max(k - 1, 0)

    def fit(self, room: int) -> None:
        """Keep the longest segment prefix whose estimate fits in ``room`` (arithmetic, no tokenizing)."""
        while self.kept > 0 and self.estimate() > room:
            self.kept -= 1


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _works(layers: Sequence[Layer | None], *, total_tokens: int, layer_budgets: Mapping[str, int],
           count: TokenCounter) -> list[_Work]:
    """The present layers in priority order, every segment counted once, all segments kept to begin with."""
    present = {layer.id: layer for layer in layers if layer is not None and (layer.segments or layer.head)}
    work: list[_Work] = []
    for priority, layer_id in enumerate(LAYER_ORDER):
        layer = present.get(layer_id)
        if layer is None:
            continue  # absent layers are omitted, from the context and from the manifest
        seg_tokens = list(layer.segment_tokens) if layer.segment_tokens is not None else [
            count(s) for s in layer.segments]
        fixed = (count(layer.head) if layer.head else 0) + (count(layer.tail) if layer.tail else 0)
        budget = None if layer_id in NEVER_TRUNCATE else layer_budgets.get(layer_id, total_tokens)
        work.append(_Work(layer, priority, seg_tokens, fixed, count(layer.joiner) if layer.joiner else 0, budget,
                          kept=len(layer.segments)))
    return work


def _never_truncated(work: list[_Work], *, total_tokens: int, sep_tokens: int,
                     count: TokenCounter) -> tuple[dict[str, int], int]:
    """The never-truncated layers' tokens and the room they need with their separators; over the budget, nothing
    is sent."""
    never = [w for w in work if w.never]
    never_tokens: dict[str, int] = {w.layer.id: count(w.layer.render(w.kept)) for w in never}
    required = sum(never_tokens.values()) + sep_tokens * max(len(never) - 1, 0)
    if required > total_tokens:
        raise PromptBudgetExceeded(budget_tokens=total_tokens, required_tokens=required, layer_tokens=never_tokens)
    return never_tokens, required


def _cut_lowest_first(work: list[_Work], *, never_tokens: Mapping[str, int], total_tokens: int,
                      sep_tokens: int) -> list[_Work]:
    """While the estimated whole is over the budget the lowest-priority truncatable layer gives way first; returns
    that order (the exact fit below cuts in it too)."""

    def estimated_total() -> int:
        live = [w for w in work if w.kept or not w.layer.segments]
        return (sum(never_tokens.get(w.layer.id, 0) if w.never else w.estimate() for w in live)
                + sep_tokens * max(len(live) - 1, 0))

    cut_order = sorted((w for w in work if not w.never), key=lambda w: w.priority, reverse=True)
    for w in cut_order:
        over = estimated_total() - total_tokens
        if over <= 0:
            break
        w.fit(max(w.estimate() - over, 0))
    return cut_order


def _exact_fit(work: list[_Work], cut_order: list[_Work], *, total_tokens: int,
               count: TokenCounter) -> tuple[str, dict[str, str], int]:
    """Render and count the context exactly; a seam that merged tokens costs one more segment, at most
    ``MAX_FIT_PASSES`` times."""
    context, texts = _render(work)
    total = count(context)
    for _ in range(MAX_FIT_PASSES):
        if total <= total_tokens:
            break
        victim = next((w for w in cut_order if w.kept > 0), None)
        if victim is None:
            break
        victim.kept -= 1
        context, texts = _render(work)
        total = count(context)
    if total > total_tokens:
        raise PromptBudgetExceeded(budget_tokens=total_tokens, required_tokens=total,
                                   layer_tokens={k: count(v) for k, v in texts.items()},
                                   what=f"after {MAX_FIT_PASSES} fitting passes the layers still")
    return context, texts, total


def assemble_layers(layers: Sequence[Layer | None], *, total_tokens: int, layer_budgets: Mapping[str, int],
                    count: TokenCounter) -> AssembledLayers:
    # Every distinct piece is tokenized once, however often it is asked about: the context, then each layer again
    # for the manifest (and the writer prompt's own total, when the caller shares its PieceCounter) cost one pass.
    count = count if isinstance(count, PieceCounter) else PieceCounter(count)
    sep_tokens = count(LAYER_SEPARATOR)
    work = _works(layers, total_tokens=total_tokens, layer_budgets=layer_budgets, count=count)
    never_tokens, required = _never_truncated(work, total_tokens=total_tokens, sep_tokens=sep_tokens, count=count)
    # No truncatable layer may take the room the never-truncated ones need (the kb's budget is the evidence caps,
    # which can be the whole envelope): each is held to the smaller of its budget and what they leave.
    room = total_tokens - required - sep_tokens * (len(work) - len(never_tokens))
    for w in work:  # each truncatable layer is first held to its own budget
        if w.budget is not None:
            w.budget = max(min(w.budget, room), 0)
            w.fit(w.budget)
    cut_order = _cut_lowest_first(work, never_tokens=never_tokens, total_tokens=total_tokens, sep_tokens=sep_tokens)
    context, texts, total = _exact_fit(work, cut_order, total_tokens=total_tokens, count=count)
    return AssembledLayers(context, _manifest(work, texts, count), total,
                           kept_refs={w.layer.id: w.layer.segment_refs[:w.kept] for w in work
                                      if w.layer.segment_refs})


def _included(w: _Work) -> bool:
    return w.kept > 0 or not w.layer.segments


def _render(work: list[_Work]) -> tuple[str, dict[str, str]]:
    texts: dict[str, str] = {w.layer.id: w.layer.render(w.kept) for w in work if _included(w)}
    return LAYER_SEPARATOR.join(texts.values()), texts


def _manifest(work: list[_Work], texts: Mapping[str, str], count: TokenCounter) -> list[LayerManifestEntry]:
    manifest = []
    for w in work:
        text = texts.get(w.layer.id, "")
        entry = LayerManifestEntry(
            id=w.layer.id, priority=w.priority, never_truncate=w.never, token_budget=w.budget,
            token_count=count(text) if text else 0, char_count=len(text), included=_included(w),
            truncated=w.kept < len(w.layer.segments),
            segments=SegmentCount(kept=w.kept, total=len(w.layer.segments)), sha256=_digest(text))
        if w.layer.segment_refs:  # seed 004: sourceRefs only on a layer built from sources
            entry = entry.model_copy(update={"source_refs": list(w.layer.segment_refs[:w.kept])})
        manifest.append(entry)
    return manifest
