"""A statute's text as sentences: the unit whose meaning the offline writer weighs against the question, and the
unit whose e5 vectors ingest stores for the ranking (U4's meaning rerank). One definition for both, so a sentence
vector computed at ingest is found again, by its exact text, when the writer weighs the same sentence."""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

_SENTENCES = re.compile(r"(?<=[.;!?])\s+|\n+")
MIN_CHARS = 16  # shorter pieces are list numbers, «Примітка.», stubs: nothing to weigh
# An editor's note in braces («{Частину першу статті 233 визнано такою, що не відповідає Конституції України …}»,
# «{Офіційне тлумачення положень … див. в Рішенні Конституційного Суду …}») and the «/* … */» around words a court
# found unconstitutional are about the text, not the law.
_NOTE = re.compile(r"\{[^{}]*\}")
_NOTE_MARK = re.compile(r"/\*|\*/")


def without_notes(text: str) -> str:
    """The text with its editors' notes as line breaks: what is left are the statute's own words, each piece
    verbatim, and a note inside a sentence ends it instead of joining its tail to the next one."""
    return _NOTE.sub("\n", _NOTE_MARK.sub("\n", text))


# An offence of the criminal code and the code of administrative offences is one sentence printed on two lines: the
# conduct, a dash, and on the next line its sanction («Умисне легке тілесне ушкодження -\nкарається штрафом …»;
# «… -\nтягне за собою накладення штрафу …»; ~2,000 of them in the core). Split at the line break, the conduct was
# quoted ending in a dash with no consequence, and the sanction stood alone, alike in every article: the answer to
# «що мені за це буде?» lost either what was done or what follows.
# The dash follows a space, or in a few articles a comma with none («… у стані сп'яніння,-»: КУпАП ст. 127; 7 in the
# core), which left those sanctions quoted alone («тягнуть за собою накладення штрафу …» as an answer).
_DANGLING_DASH = re.compile(r"[\s,][-–—]$")
_SANCTION = re.compile(r"^(?:карає?ться|караються|тягн(?:е|уть)\s+за\s+собою)\b")


def _with_sanctions(pieces: list[str]) -> list[str]:
    out: list[str] = []
    for piece in pieces:
        if out and _DANGLING_DASH.search(out[-1]) and _SANCTION.match(piece):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


_JOINT = re.compile(r"(?<=[\s,][-–—])\s+(?=(?:карає?ться|караються|тягн(?:е|уть)\s+за\s+собою)\b)")


def conduct(sentence: str) -> str:
    """An offence's sentence up to its sanction, as the line printed it («Умисне легке тілесне ушкодження -»); any
    other sentence whole."""
    return _JOINT.split(sentence, maxsplit=1)[0]


def split_sentences(text: str) -> list[str]:
    """Sentences and list items (a «;» or a line break ends one), stripped, the fragments dropped; an offence's
    conduct and its sanction stay one sentence."""
    pieces = _with_sanctions([s.strip() for s in _SENTENCES.split(text) if s.strip()])
    return [s for s in pieces if len(s) >= MIN_CHARS]


# The writer's quotes only: a «;» or a line break inside brackets does not end the sentence. КЗпП ст. 38's «У разі,
# коли заява працівника … зумовлена неможливістю продовжувати роботу (переїзд на нове місце проживання; переведення
# …; вагітність; …), роботодавець повинен розірвати трудовий договір у строк, про який просить працівник» was quoted as
# «… (переїзд на нове місце проживання» — the reasons' first item, the rule that answers cut off (50 articles of the
# core, 129 pieces). Ingest keeps split_sentences (the stored sentence vectors are found by their text); the writer
# weighs a joined sentence by a vector of its own.
PARENTHESES_JOIN_MAX = 16  # pieces one bracket may span; an unclosed one leaves the pieces as they were


def with_brackets_closed(pieces: list[str]) -> list[str]:
    """``pieces`` (split_sentences) with each piece that opens a bracket it does not close joined to the pieces up
    to the one that closes it, at most PARENTHESES_JOIN_MAX; a bracket never closed joins nothing."""
    out: list[str] = []
    i = 0
    while i < len(pieces):
        depth, j = pieces[i].count("(") - pieces[i].count(")"), i
        while depth > 0 and j + 1 < len(pieces) and j - i + 1 < PARENTHESES_JOIN_MAX:
            j += 1
            depth += pieces[j].count("(") - pieces[j].count(")")
        if depth > 0 or j == i:
            out.append(pieces[i])
            i += 1
            continue
        out.append(" ".join(pieces[i:j + 1]))
        i = j + 1
    return out


def meaning_sentences(text: str, *, max_sentences: int, max_chars: int) -> list[str]:
    """What the meaning model reads of an article: its first ``max_sentences`` sentences, each cut to
    ``max_chars`` (the model's cost grows with length; a provision's subject comes first), an offence up to its
    sanction (``conduct``)."""
    return [conduct(s)[:max_chars] for s in split_sentences(text)[:max_sentences]]


def closeness(cosines: Sequence[float]) -> list[float]:
    """Each candidate's cosine with the question on one scale: 0 at the candidates' median (and below), 1 at the
    closest; all 0 when none stands above the median."""
    if not cosines:
        return []
    top, middle = max(cosines), statistics.median(cosines)
    if top <= middle:
        return [0.0] * len(cosines)
    return [max(0.0, (c - middle) / (top - middle)) for c in cosines]
