"""Which of a user's remembered facts bear on a question: cheap lexical matching over lemmas. Pure.

A user has a handful of short facts, not a corpus: an overlap of content lemmas finds the relevant ones without an
index, and a fact that shares no meaningful word with the question is not evidence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from legaltext.text import content_lemmas

# Words that only say "remember what I said" (U2 reads them as the memory mode) match every fact equally.
MEMORY_CUE_LEMMAS = frozenset({"раніше", "минулий", "попередньо", "згадувати", "казати", "писати", "мій", "мені"})


@dataclass(frozen=True)
class MemoryMatch:
    item_id: str
    score: float  # share of the question's content lemmas the fact contains, 0..1


def match_memory(question: str, items: Sequence[tuple[str, str]], *, limit: int) -> list[MemoryMatch]:
    """``items`` are (id, text); the best ``limit`` facts sharing at least one content lemma, best first,
    newer first on ties (``items`` come newest first)."""
    wanted = set(content_lemmas(question)) - MEMORY_CUE_LEMMAS
    if not wanted or limit <= 0:
        return []
    found = []
    for pos, (item_id, text) in enumerate(items):
        overlap = wanted & set(content_lemmas(text))
        if overlap:
            found.append((-len(overlap), pos, MemoryMatch(item_id, round(len(overlap) / len(wanted), 6))))
    return [m for *_, m in sorted(found)[:limit]]
