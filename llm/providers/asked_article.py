"""The article a question names, for the offline writer (llm/providers/offline.py): which sources it names, with
which parts; the part of the article each sentence stands in; and the one named article the evidence lacks. Pure."""

from __future__ import annotations

import re

from legaltext.chunking import split_ref
from legaltext.named_acts import named_labels
from legaltext.references import article_mentions, article_numbers, without_mentions

# A question that names an article («ст. 5 Конституції України», «Що каже стаття 24 КЗпП?») is answered by that
# article first: its words there are the reference, not the content — «Конституції» and «5» matched КУ ст. 8's «на
# основі Конституції України» and a transitional provision's item «5)», and the answer quoted those, labelled
# `strong`, without a word of ст. 5. Its sentences lead (the words and meaning still order them and choose the
# details), like the item that defines an asked term; a question that says little besides the reference («ст. 24
# КЗпП», «Що каже стаття 5 Конституції?»: at most ASKED_ARTICLE_BARE_WORDS words beside it) asks what the article
# says, and is answered in the article's own order. 0: no bonus.
ASKED_ARTICLE_BONUS = 50.0
ASKED_ARTICLE_BARE_WORDS = 4


def asked_articles(question: str, refs: list[str]) -> dict[str, set[str]]:
    """The sources the question names by article number (and act, when it names one), each with the parts it
    names («ч. 2 ст. 40»: {"2"}; none named: empty)."""
    mentions = article_mentions(question)
    if not mentions or not ASKED_ARTICLE_BONUS:
        return {}
    named = named_labels(question, {split_ref(ref)[0] for ref in refs})
    asked: dict[str, set[str]] = {}
    for ref in refs:
        label, number = split_ref(ref)
        if named and label not in named:
            continue
        for m in mentions:
            if number in m.numbers:
                asked.setdefault(ref, set()).update([m.part_no] if m.part_no else [])
    return asked


_PART_START = re.compile(r"^\s*(\d+(?:-\d+)?)\.\s", re.M)


def parts_of(text: str, sentences: list[str]) -> list[str | None]:
    """The numbered part («2. …») of the article each sentence stands in, the sentences found in ``text`` in
    order; None before the first number (a chunk that starts inside a part) or where a sentence is not found."""
    marks = [(m.start(), m.group(1)) for m in _PART_START.finditer(text)]
    out: list[str | None] = []
    cursor = 0
    for sentence in sentences:
        at = text.find(sentence[:40], cursor)
        if at < 0:
            out.append(None)
            continue
        cursor = at
        out.append(next((num for start, num in reversed(marks) if start <= at), None))
    return out


def absent_articles(question: str, refs: list[str]) -> list[tuple[str, str]]:
    """The (act label, number) of the one article the question names, with its act, when no source is it: «ст.
    999 КЗпП» has no article in the evidence to answer with, and an answer quoting its neighbours must say so. A
    question naming several articles gets no such note: the evidence holds a few articles, not all it names, and a
    missing one there may well be in the law (600 «ст. N» in one question were each declared missing)."""
    numbers = article_numbers(question)
    if len(numbers) != 1 or not refs:
        return []
    held = {split_ref(ref) for ref in refs}
    named = named_labels(question, {label for label, _ in held})
    return [(label, numbers[0]) for label in named if (label, numbers[0]) not in held] if len(named) == 1 else []


def asked_first(question: str, scores: list[float],
                 places: list[tuple[str, int, str | None]]) -> tuple[list[float], list[float]]:
    """The named article's sentences first, the named part's before the rest of it (``places``: each candidate's
    ref, position and part): the scores, and the bonus that orders them. A question of nothing but the reference
    is answered by the article alone, in its order (its sentences' scores are the bonus); one that asks something
    more keeps the other sources' sentences as details, weighed against the lead's own score."""
    none = [0.0] * len(scores)
    asked = asked_articles(question, list(dict.fromkeys(ref for ref, _, _ in places)))
    if not asked:
        return scores, none
    bare = len(without_mentions(question).split()) <= ASKED_ARTICLE_BARE_WORDS
    out, bonus = list(scores), list(none)
    for i, (ref, pos, part) in enumerate(places):
        if ref not in asked:
            continue
        extra = ASKED_ARTICLE_BONUS + (ASKED_ARTICLE_BONUS / 2 if part is not None and part in asked[ref] else 0.0)
        if bare:
            out[i] = extra + 1.0 / (1 + pos)
        else:
            bonus[i] = extra
    return out, bonus
