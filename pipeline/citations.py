"""Citations in the canonical form "<act label> ст. <n>" ("КЗпП ст. 75", "Закон «Про відпустки» ст. 6"). Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass

_ART = re.compile(r"ст\.\s*(\d+(?:-\d+)?)")
_PREV_WORD = re.compile(r"([А-ЯІЇЄҐA-Z][\w'’ʼ«»]*)\s*$")
# «Закон «Про оплату праці» ст. 3» naming an act we do not know: the quoted title is the label.
_PREV_QUOTED = re.compile(r"((?:Закон\w*\s+(?:України\s+)?)?«[^«»]*(?:«[^«»]*»[^«»]*)?»)\s*$")


@dataclass(frozen=True)
class FoundCitation:
    label: str
    article: str
    act_nreg: str | None  # None: the label names no act we know
    start: int
    end: int

    @property
    def article_ref(self) -> str:
        return f"{self.label} ст. {self.article}"


def find_citations(text: str, labels: dict[str, str]) -> list[FoundCitation]:
    """``labels`` maps each known act label to its nreg; the longest label that ends right before "ст." wins."""
    ordered = sorted(labels, key=len, reverse=True)
    out = []
    for m in _ART.finditer(text):
        window_start = max(0, m.start() - 160)
        before = text[window_start: m.start()].rstrip()
        before_end = window_start + len(before)
        label = next((lab for lab in ordered if before.endswith(lab)), None)
        if label is not None:
            out.append(FoundCitation(label, m.group(1), labels[label], before_end - len(label), m.end()))
            continue
        word = _PREV_QUOTED.search(before) or _PREV_WORD.search(before)
        if word:  # looks like a citation of an act we do not know: keep it, so U11 can refuse it
            out.append(FoundCitation(word.group(1), m.group(1), None, window_start + word.start(), m.end()))
    return out
