"""Everyday words → the statute's words: a query-side thesaurus for the lexical signal.

People ask «звільнили на лікарняному», «п'яним за кермом», «аліменти», «сусіди затопили»; the acts say «розірвання
трудового договору», «тимчасова непрацездатність», «стан сп'яніння», «керування транспортним засобом», «шкода».
BM25 over lemmas never meets the two vocabularies, and no dense model shipped offline bridges them well enough
(README "Retrieval quality"). Each entry maps a lay phrase (matched on lemmas, in any order within a short window)
to the statutory words added to the lexical query at ``EXPANSION_WEIGHT`` — a hint beside the user's own words, never
instead of them.

The entries are general legal vocabulary of Ukrainian (labour, civil, family, housing, consumer, administrative,
criminal, procedure, public and military law), written from the statutes' terminology — not from evaluation
questions. Keep each entry a true equivalence: a wrong expansion pulls every question that uses the word.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from legaltext.tables import read_pairs
from legaltext.text import content_lemmas, content_readings

EXPANSION_WEIGHT = 0.5  # an added statutory word counts half a word the user typed

# lay phrase → statutory words, one entry a line in ``lay_terms.tsv`` beside this module (its header says how to write
# one). A phrase of several words matches only whole (``_holds``).
DATA_FILE = Path(__file__).with_name("lay_terms.tsv")


def read_terms(path: Path) -> dict[str, str]:
    """The entries of a thesaurus file, in its order (``legaltext.tables.read_pairs``)."""
    return read_pairs(path, shape="lay phrase<TAB>statutory words")


LAY_TERMS: dict[str, str] = read_terms(DATA_FILE)


# The statute's words may give two wordings, «A | B», where acts say the thing two ways («виїзд за межі України» |
# «залишати територію України»): the search adds the words of both, the writer looks for either whole in a sentence.
ALTERNATIVE = "|"


class _Entry(NamedTuple):
    key: tuple[str, ...]  # the lay phrase's lemmas, matched in order
    lemmas: tuple[str, ...]  # the statute's words as lemmas, each once (what the lexical query adds)
    words: str  # the statute's words as the thesaurus writes them (what a model reads)
    phrases: tuple[tuple[str, ...], ...]  # each wording's lemmas: what the offline writer finds whole in a sentence


_held: dict[str, tuple[_Entry, ...]] = {}  # "entries": the thesaurus read, once a process


def entries() -> tuple[_Entry, ...]:
    """The thesaurus in its order, each lay phrase lemmatised once a process (or read back: ``remember_entries``)."""
    if "entries" not in _held:
        _held["entries"] = _lemmatised()
    return _held["entries"]


def remember_entries(read: tuple[_Entry, ...]) -> None:
    """Entries an earlier process lemmatised from this same thesaurus and stored (engine/lexicon_store.py stores them
    beside the act lexicon, named by this file, the thesaurus and the analyser): lemmatising its ~1,000 phrases was
    ~0.3 s of a fresh ``ask``. Entries already read in this process stay."""
    _held.setdefault("entries", read)


def _lemmatised() -> tuple[_Entry, ...]:
    out = []
    for lay, legal in LAY_TERMS.items():
        key = tuple(content_lemmas(lay))
        if key:
            wordings = [w.strip() for w in legal.split(ALTERNATIVE) if w.strip()]
            phrases = tuple(tuple(dict.fromkeys(content_lemmas(w))) for w in wordings)  # each wording read once
            out.append(_Entry(key, tuple(dict.fromkeys(t for p in phrases for t in p)), " ".join(wordings), phrases))
    return tuple(out)


# Ukrainian word order is free: «звільнили на лікарняному» is also «на лікарняному звільнили», «у відділку мене
# били» is «били у відділку». A phrase of several words matches when all its lemmas stand, in any order, within
# a window of its own length plus PHRASE_SLACK content words (the words between are the sentence's own: «зупинили
# мою машину»). Chosen on eval/natural dev (U1–U4): contiguous and in order → slack 2 / 3 / 6, any order: hit@10
# 0.770 → 0.778 / 0.782 / 0.782, MRR 0.524 → 0.528 / 0.532 / 0.534; 0 keeps the phrase's words adjacent (any order).
PHRASE_SLACK = 3


@lru_cache(maxsize=1)
def _by_lemma() -> dict[str, tuple[tuple[int, _Entry], ...]]:
    """The entries (with their place in the thesaurus) under each lemma of their lay phrase: a question's lemmas look
    up only the phrases they can belong to, instead of every phrase at every position (which was ~3,000 tuple
    comparisons a lemma: ~6 ms of every U4 step, the thesaurus read four times a step)."""
    index: dict[str, list[tuple[int, _Entry]]] = {}
    for place, entry in enumerate(entries()):
        for lemma in dict.fromkeys(entry.key):
            index.setdefault(lemma, []).append((place, entry))
    return {lemma: tuple(entries) for lemma, entries in index.items()}


def _holds(slots: Sequence[AbstractSet[str]], key: tuple[str, ...]) -> bool:
    """Every lemma of ``key`` within one window of ``len(key) + PHRASE_SLACK`` words, in any order; each word stands
    for any of its readings (``slots``)."""
    need, span = set(key), len(key) + PHRASE_SLACK
    return any(slot & need and need <= set().union(*slots[i:i + span]) for i, slot in enumerate(slots))


def _slots(lemmas: list[str], readings: Sequence[tuple[str, ...]] | None) -> list[AbstractSet[str]]:
    """Each word of the question as the lemmas it may be: all its readings when given (the analyser reads «забрала»
    as the noun «забрало» first, «забрати» second), else its one lemma."""
    if readings is None:
        return [{lemma} for lemma in lemmas]
    return [set(read) | {lemma} for lemma, read in zip(lemmas, readings, strict=True)]


def _matched(lemmas: list[str], readings: Sequence[tuple[str, ...]] | None = None) -> Iterator[_Entry]:
    """The entries whose lay phrase the question's words hold (``_holds``); in the thesaurus's order, each once."""
    by_lemma = _by_lemma()
    slots = _slots(lemmas, readings)
    found: dict[int, _Entry] = {}
    for lemma in dict.fromkeys(t for slot in slots for t in slot):
        for place, entry in by_lemma.get(lemma, ()):
            if place not in found and _holds(slots, entry.key):
                found[place] = entry
    for place in sorted(found):
        yield found[place]


def statutory_words(lemmas: list[str], readings: Sequence[tuple[str, ...]] | None = None) -> list[str]:
    """The statute's words, as the thesaurus writes them, for each lay phrase the lemmas hold (in the thesaurus's
    order, each once)."""
    return list(dict.fromkeys(entry.words for entry in _matched(lemmas, readings)))


def with_statutory_words(question: str, legal: Sequence[str] | None = None) -> str:
    """The question as the meaning model reads it (U4's meaning rerank, the offline writer): with the statute's words
    for its lay phrases in parentheses — e5 knows «лікарняний» no better than the words do. ``legal``: the question's
    ``concepts`` when the caller has them already."""
    legal = concepts(question) if legal is None else legal
    return f"{question} ({'; '.join(legal)})" if legal else question


def concepts(question: str) -> list[str]:
    """The statute's words for each lay phrase of the question, one string a thesaurus entry (its wordings joined):
    what the meaning model reads beside the question, and what U4 searches alone, so that the article the statute's
    phrase stands in gets a vote of its own."""
    read = content_readings(question)
    return statutory_words([r[0] for r in read], read)


def expansion_phrases(lemmas: list[str],
                      readings: Sequence[tuple[str, ...]] | None = None) -> list[tuple[str, ...]]:
    """The statutory phrases (lemmas in order) that the question's lay phrases stand for (in the thesaurus's
    order, each once)."""
    return list(dict.fromkeys(entry.lemmas for entry in _matched(lemmas, readings)))


def lay_phrases(lemmas: list[str], readings: Sequence[tuple[str, ...]] | None = None,
                ) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Each lay phrase the lemmas hold with the statutory phrase it stands for, both as lemmas (in the thesaurus's
    order, each pair once; one pair for each wording of an entry): what the question said beside how the statute
    says it."""
    return list(dict.fromkeys((entry.key, phrase) for entry in _matched(lemmas, readings) for phrase in entry.phrases))


def expansions(lemmas: list[str], readings: Sequence[tuple[str, ...]] | None = None) -> list[str]:
    """The statutory lemmas that the question's lay phrases stand for, not already among its own lemmas."""
    own = set(lemmas)
    return list(dict.fromkeys(t for phrase in expansion_phrases(lemmas, readings) for t in phrase if t not in own))
