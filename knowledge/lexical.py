"""The lexical signal as Qdrant sparse vectors: BM25 term weights over Ukrainian lemmas.

Documents carry the BM25 term-frequency part; Qdrant's IDF modifier supplies the inverse document frequency at
query time, so the index stays correct as acts are added without a corpus-wide pass.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from legaltext.lay_terms import EXPANSION_WEIGHT, expansions
from legaltext.text import content_readings, verbal_nouns

BM25_K1 = 1.2
BM25_B = 0.75
# Average chunk length in lemmas, measured on the core corpus with 1200-char chunks; a constant keeps
# document weights independent of what else is indexed.
BM25_AVGDL = 90.0
# The heading field: an article's heading is its summary, and a short field lets an exact heading match stand out
# where the same words spread over a long article's text would be diluted. Average heading length in lemmas.
HEADING_AVGDL = 5.0
# The lay questions' field (knowledge/index.py QUESTION_WORDS): an article's questions joined; the average length in
# lemmas over the shipped questions as of session 33 (7,840 articles, up to 5 each; median 14). Session 34's 1,907
# more raised the average to 16.7; 16.7 was measured against 14.5 and lost on dev (hit@1 0.661 vs 0.665), so it stays.
QUESTIONS_AVGDL = 14.5


@dataclass(frozen=True)
class Sparse:
    indices: list[int]
    values: list[float]


def term_id(term: str) -> int:
    return zlib.crc32(term.encode("utf-8")) & 0x7FFFFFFF


def _to_sparse(weights: dict[int, float]) -> Sparse:
    items = sorted(weights.items())
    return Sparse([i for i, _ in items], [v for _, v in items])


def _term_counts(text: str) -> tuple[dict[int, float], int]:
    """Each word's readings share one occurrence: a word the analyser reads two ways counts half for each, so
    «року» (рік / рок) meets «рік» and still weighs one word."""
    counts: dict[int, float] = {}
    tokens = content_readings(text)
    for read in tokens:
        for r in read:
            counts[term_id(r)] = counts.get(term_id(r), 0.0) + 1.0 / len(read)
    return counts, len(tokens)


def document_vector(text: str, avgdl: float = BM25_AVGDL) -> Sparse:
    counts, n = _term_counts(text)
    dl = max(n, 1)
    norm = BM25_K1 * (1 - BM25_B + BM25_B * dl / avgdl)
    return _to_sparse({tid: tf * (BM25_K1 + 1) / (tf + norm) for tid, tf in counts.items()})


def heading_vector(heading: str | None) -> Sparse | None:
    """The heading field of an article (its first chunk carries it); None when the article has no heading."""
    if not heading or not heading.strip():
        return None
    vec = document_vector(heading, HEADING_AVGDL)
    return vec if vec.indices else None


def questions_vector(questions: Sequence[str]) -> Sparse | None:
    """The lay questions' field of an article (its first chunk carries it); None without questions."""
    if not questions:
        return None
    vec = document_vector(" ".join(questions), QUESTIONS_AVGDL)
    return vec if vec.indices else None


def _with_readings(weights: dict[int, float], readings: list[tuple[str, ...]]) -> dict[int, float]:
    """A word's first reading at the weight already given; its other readings at a share of one word."""
    for read in readings:
        for r in read:
            weights.setdefault(term_id(r), 1.0 / len(read))
    return weights


def query_vector(text: str) -> Sparse:
    read = content_readings(text)
    return _to_sparse(_with_readings({term_id(r[0]): 1.0 for r in read}, read))


def question_vector(text: str, expansion_weight: float | None = None) -> Sparse:
    """A question's lexical query: its own lemmas, and at a lower weight the statute's words for its lay phrases
    (legaltext/lay_terms.py) and the nouns of its verbs («звільнити» → «звільнення»: legaltext/text.py).
    Defined-term lookups keep ``query_vector``: a term is the statute's word."""
    read = content_readings(text, question=True)
    lemmas = [r[0] for r in read]  # question_lemmas, from the one reading of the question
    expansion_weight = EXPANSION_WEIGHT if expansion_weight is None else expansion_weight
    added = [*expansions(lemmas, read), *(n for t in lemmas for n in verbal_nouns(t))]
    weights = {term_id(t): expansion_weight for t in added} if expansion_weight > 0 else {}
    weights.update({term_id(t): 1.0 for t in lemmas})
    return _to_sparse(_with_readings(weights, read))
