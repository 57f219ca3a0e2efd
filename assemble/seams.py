"""Exact token counts of a long text from the counts of its pieces, each piece encoded once (issue 15, item 5).

tiktoken cuts a text into pieces with a regex and runs BPE on each piece on its own, so a text's count is the sum
of its pieces' counts. In the two encodings the project counts with (cl100k_base and o200k_base:
``llm.tokenizer``) no piece runs across a newline that is followed by a character other than whitespace or "/" —
call that place a *hard seam*. Why: the patterns (tiktoken_ext/openai_public.py) have no lookbehind; the only
alternatives that match a newline are the whitespace ones, which match whitespace only, and the punctuation one,
whose trailing ``[\\r\\n]*`` (``[\\r\\n/]*`` in o200k) stops at any other character. So in ``a + b`` with a hard
seam between them a piece ends exactly at the seam; ``b``'s pieces are found as in ``b`` alone; and ``a``'s as in
``a`` alone, because ``a``'s last whitespace run ends in the newline either way (``\\s*[\\r\\n]+`` and cl100k's
``\\s++$`` take the same run). Hence ``count(a + b) == count(a) + count(b)``, exactly.

U9 uses it to count each candidate paragraph once: a candidate too long for its channel is known to be at the
paragraph that overflows (the rest is never encoded), a cut block reuses the paragraphs before the cut, and the
rendered ``<kb_context>`` — blocks joined by newlines, each starting with ``<`` — is the sum of counts already
known plus the few join pieces. ``tests/assemble/test_seams.py`` checks the equality on random text for both
encodings, and U9's choices and totals against the slow whole-text reference.
"""

from __future__ import annotations

import re
from collections.abc import Callable

TokenCounter = Callable[[str], int]

# A newline and then anything but whitespace or "/": Python's \s covers every character tiktoken's \s does (the
# Unicode White_Space set), so a seam this finds is a hard seam for the regex too.
HARD_SEAM = re.compile(r"\n(?=[^\s/])")


def hard_pieces(text: str) -> list[str]:
    """``text`` cut after every hard-seam newline; the pieces join back to ``text``."""
    pieces, start = [], 0
    for m in HARD_SEAM.finditer(text):
        pieces.append(text[start:m.end()])
        start = m.end()
    if start < len(text) or not pieces:
        pieces.append(text[start:])
    return pieces


class PieceCounter:
    """Exact counts as sums over hard-seam pieces, each distinct piece encoded once for the counter's lifetime
    (one assembly: the memo holds that assembly's candidate text, nothing more)."""

    def __init__(self, count: TokenCounter) -> None:
        self._count = count
        self._seen: dict[str, int] = {}

    def _piece(self, piece: str) -> int:
        tokens = self._seen.get(piece)
        if tokens is None:
            tokens = self._seen[piece] = self._count(piece)
        return tokens

    def __call__(self, text: str) -> int:
        return sum(self._piece(p) for p in hard_pieces(text))

    def at_most(self, text: str, limit: int) -> int | None:
        """``text``'s exact count if it is at most ``limit``, else None — found without encoding what follows the
        piece that goes over (counts are never negative, so a partial sum over the limit settles it)."""
        total = 0
        for piece in hard_pieces(text):
            total += self._piece(piece)
            if total > limit:
                return None
        return total
