"""Everyday words → the statute's words: a query-side thesaurus for the lexical signal.

People ask «звільнили на лікарняному», «п'яним за кермом», «аліменти», «сусіди затопили»; the acts say «розірвання
трудового договору», «тимчасова непрацездатність», «стан сп'яніння», «керування транспортним засобом», «шкода».
BM25 over lemmas never meets the two vocabularies, and no dense model shipped offline bridges them well enough
(README "Retrieval quality"). Each entry maps a lay phrase (matched on lemmas, in order) to the statutory words
added to the lexical query at ``EXPANSION_WEIGHT`` — a hint beside the user's own words, never instead of them.

The entries are general legal vocabulary of Ukrainian (labour, civil, family, housing, consumer, administrative,
criminal, procedure, public and military law), written from the statutes' terminology — not from evaluation
questions. Keep each entry a true equivalence: a wrong expansion pulls every question that uses the word.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from legaltext.text import content_lemmas

EXPANSION_WEIGHT = 0.5  # an added statutory word counts half a word the user typed

# lay phrase → statutory words, one entry a line in ``lay_terms.tsv`` beside this module (its header says how to write
# one). A phrase of several words matches only as a lemma sequence.
DATA_FILE = Path(__file__).with_name("lay_terms.tsv")


def read_terms(path: Path) -> dict[str, str]:
    """The entries of a thesaurus file, in its order: ``lay phrase<TAB>statutory words``; blank lines and ``#``
    comments skipped. A malformed line or a lay phrase given twice is an error, not a silent override."""
    terms: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        lay, tab, legal = line.partition("\t")
        lay, legal = lay.strip(), legal.strip()
        if not tab or not lay or not legal:
            raise ValueError(f"{path.name}:{number}: expected 'lay phrase<TAB>statutory words', got {line!r}")
        if lay in terms:
            raise ValueError(f"{path.name}:{number}: {lay!r} is given twice")
        terms[lay] = legal
    return terms


LAY_TERMS: dict[str, str] = read_terms(DATA_FILE)


@lru_cache(maxsize=1)
def _entries() -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    out = []
    for lay, legal in LAY_TERMS.items():
        key = tuple(content_lemmas(lay))
        if key:
            out.append((key, tuple(dict.fromkeys(content_lemmas(legal)))))
    return tuple(sorted(out, key=lambda e: -len(e[0])))


@lru_cache(maxsize=1)
def _worded() -> tuple[tuple[tuple[str, ...], str], ...]:
    return tuple((key, legal) for key, legal in ((tuple(content_lemmas(lay)), legal) for lay, legal in
                                                  LAY_TERMS.items()) if key)


def statutory_words(lemmas: list[str]) -> list[str]:
    """The statute's words, as the thesaurus writes them, for each lay phrase the lemmas hold (in the thesaurus's
    order, each once)."""
    found: dict[str, None] = {}
    for key, legal in _worded():
        n = len(key)
        if any(tuple(lemmas[i:i + n]) == key for i in range(len(lemmas) - n + 1)):
            found[legal] = None
    return list(found)


def expansion_phrases(lemmas: list[str]) -> list[tuple[str, ...]]:
    """The statutory phrases (lemmas in order) that the question's lay phrases stand for."""
    found: dict[tuple[str, ...], None] = {}
    for key, legal in _entries():
        n = len(key)
        if any(tuple(lemmas[i:i + n]) == key for i in range(len(lemmas) - n + 1)):
            found[legal] = None
    return list(found)


def expansions(lemmas: list[str]) -> list[str]:
    """The statutory lemmas that the question's lay phrases stand for, not already among its own lemmas."""
    own = set(lemmas)
    return list(dict.fromkeys(t for phrase in expansion_phrases(lemmas) for t in phrase if t not in own))
