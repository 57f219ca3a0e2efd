"""Citations of articles, in the canonical form "<act label> ст. <n>" ("КЗпП ст. 75", "Закон «Про відпустки» ст. 6")
and in the free forms a model writes anyway: "ст. 36 КЗпП", "статтею 36 Кодексу законів про працю", "частина третя
статті 40", "статті 6 Закону України «Про відпустки»", "ст. 36, 40 КЗпП". Pure.

Every article mention is found and bound to an act when the text names one (by label, quoted title, inflected
title, a code's initials, or "цього Кодексу"); a mention that names no act takes the act named earlier in its
sentence, else it is bound only when exactly one evidence article has that number. A mention that cannot be bound
keeps an empty label, so U11 refuses it and U12 removes it: for a verifier, an article it cannot place is as bad
as one it cannot find.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from legaltext.chunking import FINAL_PROVISIONS, FINAL_PROVISIONS_NAME, article_ref, split_ref
from legaltext.lexicon import GENERIC_TITLE_WORDS, NAME_STEM
from legaltext.text import lemma

# "ст. 36", "ст.ст. 36", "статтею 36", "статей 36", with an optional "пункт 1 частини третьої" / "ч. 3" before it.
_HEAD = re.compile(
    r"(?<![\w.])"
    r"(?P<part>(?:(?:п\.|пункт\w*)\s*\d+\s+)?(?:(?:ч\.|частин\w*)\s*(?:\d+|[^\W\d_]+)\s+)?)"
    r"(?:ст\.(?:\s*ст\.)?|статт\w*|статей)\s*(?P<num>\d+(?:-\d+)?)(?![\w])",
    re.I,
)
# "ЦК, Прикінцеві та перехідні положення", "пункт 2 розділу XV «Прикінцеві положення» цього Закону": an act's final
# provisions, one unit a citation names without a number (legaltext/chunking.py FINAL_PROVISIONS)
_FINAL_HEAD = re.compile(
    r"(?<![\w.])(?P<part>(?:(?:п\.|пункт\w*)\s*\d+(?:-\d+)*\s+)?)(?:(?:розд\.|розділ\w*)\s*[IVXLCІ]+\.?\s+)?«?"
    r"(?:прикінцев\w*(?:\s+(?:та|і|й)\s+перехідн\w*)?|перехідн\w*|заключн\w*)\s+положен\w*»?",
    re.I,
)
_MORE = re.compile(r"(?:\s*,\s*|\s+(?:і|й|та)\s+|\s*[–—]\s*)(\d+(?:-\d+)?)(?![\w])")
_LIST_END = re.compile(r"\s*(?:[,;.:)\]]|$|[–—]|(?:і|й|та)\s+\d|цьо|ціє|зазнач|того\s+ж|[«A-ZА-ЯІЇЄҐ])")
_QUOTED_AFTER = re.compile(
    r"(?:(?P<kind>Закон\w*|Постанов\w*|Указ\w*|Кодекс\w*)\s+(?:України\s+)?)?«(?P<title>[^«»]*(?:«[^«»]*»[^«»]*)?)»")
_PREV_QUOTED = re.compile(r"((?:Закон\w*\s+(?:України\s+)?)?«[^«»]*(?:«[^«»]*»[^«»]*)?»)\s*$")
_THIS_ACT = re.compile(r"(?:цього|ціє[їй]|зазначеного|вказаного|того\s+ж)\s+(?P<kind>Кодекс\w*|Закон\w*|Конституц\w*)",
                       re.I)
_ABBREV = re.compile(r"[А-ЯІЇЄҐA-Z][А-ЯІЇЄҐA-Zа-яіїєґa-z]{1,7}(?![\w'’ʼ])")
_PREV_ABBREV = re.compile(r"(?<![\w'’ʼ])([А-ЯІЇЄҐA-Z][А-ЯІЇЄҐA-Zа-яіїєґa-z]{1,7})\s*$")
_WORD = re.compile(r"[\w'’ʼ-]+")
_QUOTED_LAW = re.compile(r"Закон «(.+)»")  # a law's label: its title in quotes
MAX_NAME_WORDS = 9
WINDOW = 200  # characters looked at on either side of an article mention


def _caps(token: str) -> int:
    return sum(ch.isupper() for ch in token)


def _stem(word: str) -> str:
    return lemma(word.lower().strip("-'’ʼ"))[:NAME_STEM]


def _is_law(label: str) -> bool:
    return label.startswith("Закон")


@dataclass(frozen=True)
class FoundCitation:
    label: str  # the act's canonical label; "" when the mention could not be bound to any act
    article: str
    act_nreg: str | None  # None: not an act we know (or not bound at all)
    start: int  # the whole mention: part prefix, article word and numbers, act name
    end: int
    # label | quoted | title | initials | this_act | inherited | source | evidence | unknown | unbound
    how: str = "label"
    part: str | None = None
    # inside a quote whose source closes the sentence in parentheses: an article the quote mentions on its way
    in_passing: bool = False

    @property
    def article_ref(self) -> str:
        return article_ref(self.label, self.article) if self.label else self.bare_ref

    @property
    def bare_ref(self) -> str:
        return FINAL_PROVISIONS_NAME if self.article == FINAL_PROVISIONS else f"ст. {self.article}"


KEY_CHARS = 3  # a label is looked up by its first (or last) characters


@dataclass(frozen=True)
class _Labels:
    """The catalog's labels (~12,600), longest first, bucketed by their first and by their last ``KEY_CHARS``
    characters: a mention is checked against the few labels that can start (or end) where it stands, not all of
    them (the linear scan was ~0.15 s of every answer's U10 and U11 on the core catalog)."""

    ordered: tuple[tuple[str, str], ...]
    by_head: dict[str, tuple[int, ...]]
    by_tail: dict[str, tuple[int, ...]]
    short: tuple[int, ...]  # labels shorter than KEY_CHARS: candidates everywhere
    names: frozenset[str]

    @classmethod
    def of(cls, ordered: tuple[tuple[str, str], ...]) -> _Labels:
        by_head: dict[str, list[int]] = {}
        by_tail: dict[str, list[int]] = {}
        short: list[int] = []
        for i, (label, _) in enumerate(ordered):
            if len(label) < KEY_CHARS:
                short.append(i)
                continue
            by_head.setdefault(label[:KEY_CHARS], []).append(i)
            by_tail.setdefault(label[-KEY_CHARS:], []).append(i)
        return cls(ordered, {k: tuple(v) for k, v in by_head.items()}, {k: tuple(v) for k, v in by_tail.items()},
                   tuple(short), frozenset(label for label, _ in ordered))

    def _in_order(self, bucket: tuple[int, ...]) -> Iterator[tuple[str, str]]:
        for i in heapq.merge(bucket, self.short):
            yield self.ordered[i]

    def starting(self, text: str) -> Iterator[tuple[str, str]]:
        """In ``ordered``'s order, every label ``text`` could start with (and a few it does not)."""
        return self._in_order(self.by_head.get(text[:KEY_CHARS], ()))

    def ending(self, text: str) -> Iterator[tuple[str, str]]:
        """In ``ordered``'s order, every label ``text`` could end with (and a few it does not)."""
        return self._in_order(self.by_tail.get(text[-KEY_CHARS:], ()))


@dataclass(frozen=True)
class _Names:
    """The act names ``find_citations`` binds a mention by, parsed from one label mapping (and catalog titles)."""

    labels: _Labels  # (label, nreg), longest label first
    forms: tuple[tuple[tuple[str, ...], str], ...]  # (title stems, nreg), longest first
    quoted: dict[str, str]  # lower-cased quoted title -> nreg
    abbrevs: tuple[tuple[str, str], ...]  # (lower-cased abbreviation, nreg), longest first
    by_nreg: dict[str, tuple[str, ...]]  # nreg -> its labels in order, the canonical one first

    def label_of(self, nreg: str) -> str:
        found = self.by_nreg.get(nreg)
        return found[0] if found else nreg

    def quoted_nreg(self, title: str) -> str | None:
        return self.quoted.get(title)

    def starting(self, text: str) -> Iterator[tuple[str, str]]:
        return self.labels.starting(text)

    def ending(self, text: str) -> Iterator[tuple[str, str]]:
        return self.labels.ending(text)

    def iter_forms(self) -> Iterator[tuple[tuple[str, ...], str]]:
        return iter(self.forms)

    def iter_abbrevs(self) -> Iterator[tuple[str, str]]:
        return iter(self.abbrevs)


def _longest_first(top: Iterable[tuple[Any, str]], base: Iterable[tuple[Any, str]]
                   ) -> Iterator[tuple[Any, str]]:
    """Two longest-first streams as one, the top's first among equals (as one mapping built top first would)."""
    return heapq.merge(top, base, key=lambda pair: -len(pair[0]))


@dataclass(frozen=True)
class _Layered:
    """The names of the evidence's labels over the catalog's, exactly as ``_names`` of the two mappings merged (the
    evidence's first) would parse them — without parsing the catalog's ~12,600 names again for every run. Every
    key the top defines it wins; a key only the catalog defines keeps the catalog's act; an act's canonical label
    skips the labels the top gave to another act."""

    top: _Names
    base: _Names

    def label_of(self, nreg: str) -> str:
        if nreg in self.top.by_nreg:
            return self.top.label_of(nreg)
        taken = self.top.labels.names
        return next((label for label in self.base.by_nreg.get(nreg, ()) if label not in taken), nreg)

    def quoted_nreg(self, title: str) -> str | None:
        return self.top.quoted.get(title) or self.base.quoted.get(title)

    def starting(self, text: str) -> Iterator[tuple[str, str]]:
        return _longest_first(self.top.starting(text), self.base.starting(text))

    def ending(self, text: str) -> Iterator[tuple[str, str]]:
        return _longest_first(self.top.ending(text), self.base.ending(text))

    def iter_forms(self) -> Iterator[tuple[tuple[str, ...], str]]:
        return _longest_first(self.top.forms, self.base.forms)

    def iter_abbrevs(self) -> Iterator[tuple[str, str]]:
        return _longest_first(self.top.abbrevs, self.base.abbrevs)


_NameIndex = _Names | _Layered


class EvidenceFirst(Mapping[str, str]):
    """Citation labels (label → nreg) in two layers: the evidence's acts over the catalog's, so a label two acts share
    names the act the writer was given. The same mapping as one dict built evidence first; kept layered because the
    catalog layer is one object per lexicon, and ``find_citations`` parses its names once per process, not once per
    run (~20 ms each of U10, U11 and U12)."""

    def __init__(self, first: Mapping[str, str], catalog: Mapping[str, str]) -> None:
        self.first = dict(first)
        self.catalog = catalog

    def __getitem__(self, label: str) -> str:
        return self.first[label] if label in self.first else self.catalog[label]

    def __contains__(self, label: object) -> bool:
        return label in self.first or label in self.catalog

    def __iter__(self) -> Iterator[str]:
        yield from self.first
        yield from (label for label in self.catalog if label not in self.first)

    def __len__(self) -> int:
        return len(self.first) + sum(1 for label in self.catalog if label not in self.first)


CATALOG_NAMES_KEPT = 4  # catalog layers parsed and kept per process (with titles and without; a reloaded lexicon)
_catalog_names: list[tuple[Mapping[str, str], Mapping[str, str] | None, _Names]] = []


def _names_of(labels: Mapping[str, str], titles: Mapping[str, str] | None) -> _NameIndex:
    if not isinstance(labels, EvidenceFirst):
        return _names(tuple(labels.items()), tuple((titles or {}).items()))
    # held by identity (the objects are kept alive here, so an id is never reused while its entry stands)
    base = next((n for c, t, n in _catalog_names if c is labels.catalog and t is titles), None)
    if base is None:
        base = _names.__wrapped__(tuple(labels.catalog.items()), tuple((titles or {}).items()))
        _catalog_names.insert(0, (labels.catalog, titles, base))
        del _catalog_names[CATALOG_NAMES_KEPT:]
    if not labels.first:
        return base
    return _Layered(_names(tuple(labels.first.items()), ()), base)


# A worker meets the catalog's ~12,600 names again with every run whose evidence reorders the labels (a new
# ``_names`` key): stemmed once per process, not once per run, that rebuild takes 0.04 s instead of 0.21 s (core
# catalog, measured in a fresh process). A fresh process is handed the stems a previous one computed
# (``remember_title_stems``, engine/lexicon_store.py) instead of stemming them all in its first U10.
TITLE_STEMS_CACHE = 65_536
_stems: dict[str, tuple[str, ...]] = {}


def _title_stems(title: str) -> tuple[str, ...]:
    known = _stems.get(title)
    if known is None:
        known = tuple(s for s in (_stem(w) for w in _WORD.findall(title)) if s and s not in GENERIC_TITLE_WORDS)
        if len(_stems) < TITLE_STEMS_CACHE:
            _stems[title] = known
    return known


def name_stems(names: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The stems ``find_citations`` matches each act name by (a title, or a label's quoted title)."""
    out: dict[str, tuple[str, ...]] = {}
    for name in names:
        quoted = _QUOTED_LAW.fullmatch(name.strip())
        for form in (name, quoted.group(1)) if quoted else (name,):
            out[form] = _title_stems(form)
    return out


def remember_title_stems(stems: Mapping[str, tuple[str, ...]]) -> None:
    """Stems computed by an earlier process for these names (same code, same dictionaries)."""
    for title, found in stems.items():
        if len(_stems) >= TITLE_STEMS_CACHE:
            break
        _stems.setdefault(title, found)


@lru_cache(maxsize=32)
def _names(labels: tuple[tuple[str, str], ...], titles: tuple[tuple[str, str], ...]) -> _Names:
    forms: dict[tuple[str, ...], str] = {}
    quoted: dict[str, str] = {}
    abbrevs: dict[str, str] = {}
    by_nreg: dict[str, list[str]] = {}
    labels = tuple((label.strip(), nreg) for label, nreg in labels if label.strip())  # untitled acts have none
    for label, nreg in labels:
        by_nreg.setdefault(nreg, []).append(label)
        match = _QUOTED_LAW.fullmatch(label)
        if match:
            quoted.setdefault(match.group(1).lower(), nreg)
            forms.setdefault(_title_stems(match.group(1)), nreg)
        elif " " in label:
            forms.setdefault(_title_stems(label), nreg)
        elif _caps(label) >= 2:
            abbrevs.setdefault(label.lower(), nreg)
    for title, nreg in titles:
        if not title.strip():
            continue
        forms.setdefault(_title_stems(title), nreg)
        if title.startswith("Про "):
            quoted.setdefault(title.lower(), nreg)
    forms.pop((), None)
    return _Names(labels=_Labels.of(tuple(sorted(labels, key=lambda p: len(p[0]), reverse=True))),
                  forms=tuple(sorted(forms.items(), key=lambda p: len(p[0]), reverse=True)), quoted=quoted,
                  abbrevs=tuple(sorted(abbrevs.items(), key=lambda p: len(p[0]), reverse=True)),
                  by_nreg={nreg: tuple(found) for nreg, found in by_nreg.items()})


@dataclass(frozen=True)
class _Act:
    label: str
    nreg: str | None
    start: int  # where the act's name is in the text
    end: int
    how: str


def _known(names: _NameIndex, nreg: str, start: int, end: int, how: str) -> _Act:
    return _Act(names.label_of(nreg), nreg, start, end, how)


def _name_words(text: str, pos: int) -> list[re.Match[str]]:
    """The words right after ``pos`` up to the first punctuation: where an act's name can be."""
    out: list[re.Match[str]] = []
    cursor = pos
    for m in _WORD.finditer(text, pos, min(len(text), pos + WINDOW)):
        if text[cursor:m.start()].strip() or len(out) == MAX_NAME_WORDS:
            break
        out.append(m)
        cursor = m.end()
    return out


def _with_ukraine(text: str, words: list[re.Match[str]], used: int) -> int:
    end = words[used - 1].end()
    if used < len(words) and _stem(words[used].group()) == "україн":
        end = words[used].end()
    return end


def _by_title(names: _NameIndex, text: str, words: list[re.Match[str]]) -> _Act | None:
    """"Кодексу законів про працю України", "Закону про відпустки": a catalog title, inflected."""
    if not words or not words[0].group()[0].isupper():
        return None
    stems = [_stem(w.group()) for w in words]
    significant = [(i, s) for i, s in enumerate(stems) if s not in GENERIC_TITLE_WORDS]
    lawish = stems[0].startswith(("закон", "консти"))
    for form, nreg in names.iter_forms():
        if len(form) == 1 and not lawish:  # "Відпустки" alone is a word, "Закону про відпустки" is a name
            continue
        if tuple(s for _, s in significant[:len(form)]) == form:
            used = significant[len(form) - 1][0] + 1
            return _known(names, nreg, words[0].start(), _with_ukraine(text, words, used), "title")
    return None


def _by_initials(names: _NameIndex, text: str, words: list[re.Match[str]]) -> _Act | None:
    """"Кодексу законів про працю" is КЗпП, "Цивільного кодексу" is ЦК, "Конституції України" is КУ: codes and
    the Constitution are abbreviated by their initials ("України" is skipped when the abbreviation omits it)."""
    head = words[:6]
    if not head or not head[0].group()[0].isupper():
        return None
    if not any(_stem(w.group()) == "кодекс" for w in head[:3]) and _stem(head[0].group()) != "консти":
        return None
    initials = [w.group()[0].lower() for w in head]
    for abbrev, nreg in names.iter_abbrevs():
        for used in range(len(abbrev), len(head) + 1):
            letters = [c for i, c in enumerate(initials[:used]) if not (c == "у" and _stem(head[i].group()) ==
                                                                     "україн" and "у" not in abbrev)]
            if "".join(letters) == abbrev:
                return _known(names, nreg, head[0].start(), _with_ukraine(text, words, used), "initials")
            if len(letters) > len(abbrev):
                break
    return None


def _act_after(names: _NameIndex, text: str, pos: int, previous: list[FoundCitation]) -> _Act | None:
    rest = text[pos:pos + WINDOW]
    at = pos + len(rest) - len(rest.lstrip())
    if at == pos and rest[:1].isalnum():
        return None
    tail = text[at:at + WINDOW]
    for label, nreg in names.starting(tail):
        if tail.startswith(label) and not tail[len(label):len(label) + 1].isalnum():
            return _known(names, nreg, at, at + len(label), "label")
    quoted = _QUOTED_AFTER.match(tail)
    if quoted:
        quoted_nreg = names.quoted_nreg(quoted.group("title").lower())
        if quoted_nreg is not None:
            return _known(names, quoted_nreg, at, at + quoted.end(), "quoted")
    this = _THIS_ACT.match(tail)
    if this:  # "статті 40 цього Кодексу": the act last named explicitly, of the same kind (law or code)
        law = this.group("kind").lower().startswith("закон")
        for c in reversed(previous):
            if c.act_nreg and c.how not in ("evidence", "this_act") and _is_law(c.label) == law:
                return _Act(c.label, c.act_nreg, at, at + this.end(), "this_act")
        return _Act("", None, at, at + this.end(), "unbound")
    words = _name_words(text, at)
    found = _by_title(names, text, words) or _by_initials(names, text, words)
    if found:
        return found
    if quoted:  # a quoted title of an act we do not know: keep it, so U11 can refuse it
        title, kind = quoted.group("title"), quoted.group("kind") or "Закон"
        label = f"Закон «{title}»" if kind.startswith("Закон") else f"{kind} «{title}»"
        return _Act(label, None, at, at + quoted.end(), "unknown")
    abbrev = _ABBREV.match(tail)
    if abbrev and _caps(abbrev.group()) >= 2:
        return _Act(abbrev.group(), None, at, at + abbrev.end(), "unknown")
    if words and words[0].group()[0].isupper():
        stems = [_stem(w.group()) for w in words[:4]]
        if "кодекс" in stems:  # "Податкового кодексу" of a catalog without it
            end = _with_ukraine(text, words, stems.index("кодекс") + 1)
            return _Act(text[at:end], None, at, end, "unknown")
    return None


def _act_before(names: _NameIndex, text: str, start: int, floor: int, *, comma: bool = False) -> _Act | None:
    """The canonical form names the act right before "ст.": "КЗпП ст. 75", "Закон «Про відпустки» ст. 6" — and
    before a comma ahead of the final provisions: "ЦК, Прикінцеві та перехідні положення"."""
    window_start = max(floor, start - WINDOW)
    before = text[window_start:start].rstrip()
    if comma and before.endswith(","):
        before = before[:-1].rstrip()
    before_end = window_start + len(before)
    for label, nreg in names.ending(before):
        begin = before_end - len(label)
        if before.endswith(label) and begin >= floor and not text[begin - 1:begin].isalnum():
            return _known(names, nreg, begin, before_end, "label")
    unknown = _PREV_QUOTED.search(before) or _PREV_ABBREV.search(before)
    if unknown and (unknown.re is _PREV_QUOTED or _caps(unknown.group(1)) >= 2):
        return _Act(unknown.group(1), None, window_start + unknown.start(1), before_end, "unknown")
    return None


def _from_evidence(article: str, evidence: Mapping[str, list[tuple[str, str | None]]]) -> _Act | None:
    candidates = evidence.get(article, [])
    if len(candidates) == 1:
        label, nreg = candidates[0]
        return _Act(label, nreg, -1, -1, "evidence")
    return None


_TEXTUAL = frozenset({"label", "quoted", "title", "initials", "this_act", "inherited"})
_SENTENCE_END = re.compile(r"[.!?\n]")


def _same_sentence_act(text: str, start: int, previous: list[FoundCitation]) -> _Act | None:
    """"Закон «Про відпустки» ст. 6 та ст. 7": a bare mention in the sentence of a named act is that act's article.
    Binding it by the evidence instead could pass off another act's article 7 as the one the reader sees."""
    last = next((c for c in reversed(previous) if c.how in _TEXTUAL and c.act_nreg), None)
    if last is None or _SENTENCE_END.search(text, last.end, start):
        return None
    return _Act(last.label, last.act_nreg, -1, -1, "inherited")


def _mentioned_in_passing(text: str, c: FoundCitation, later: list[FoundCitation]) -> bool:
    """``c`` stands inside a quote: a source closes its sentence in parentheses ("… статтею 26 Закону України "Про
    …" … (Закон «Про судоустрій і статус суддів» ст. 141).") and ``c`` is not itself that parenthesis."""
    return not text[:c.start].rstrip().endswith("(") and _closing_source(text, c, later) is not None


def _closing_source(text: str, c: FoundCitation, later: list[FoundCitation]) -> FoundCitation | None:
    """The quoted source that closes ``c``'s sentence in parentheses; None when the sentence ends first or its
    next citation is not a parenthesised source."""
    source = next((x for x in later if x.how in _TEXTUAL and x.act_nreg), None)
    if (source is None or _SENTENCE_END.search(text, c.end, source.start)
            or not text[:source.start].rstrip().endswith("(") or not text[source.end:].lstrip().startswith(")")):
        return None
    return source


def _quoted_source(text: str, c: FoundCitation, earlier: list[FoundCitation], later: list[FoundCitation]
                   ) -> FoundCitation:
    """A quote carries its source after it: "… у частині другій статті 36 цього Закону … (Закон «Про …» ст. 52)."
    A mention inside it is that source's article, as statutes refer to their own articles without naming the act —
    when the source closes the same sentence, in parentheses, and nothing in the sentence before named an act
    ("цього Закону" bound to a law quoted lines above would pass off another act's article)."""
    if c.how == "this_act":
        named = next((x for x in reversed(earlier) if x.act_nreg == c.act_nreg and x.how in _TEXTUAL), None)
        if named is not None and not _SENTENCE_END.search(text, named.end, c.start):
            return c
    elif c.how != "unbound":
        return c
    source = _closing_source(text, c, later)
    if source is None:
        return c
    this = _THIS_ACT.search(text, c.start, c.end)
    if this and this.group("kind").lower().startswith("закон") != _is_law(source.label):
        return c  # "цього Кодексу" quoted from a law names some code, not the law
    return FoundCitation(source.label, c.article, source.act_nreg, c.start, c.end, "source", c.part)


def basis_first(found: list[FoundCitation]) -> list[FoundCitation]:
    """The answer's citations in reading order, but the articles a quoted norm refers to after the ones quoted: the
    first citation is what the answer rests on, not an article the quote happens to mention on its way — its own
    act's («статті 12 цього Закону») or another's («статтею 26 Закону України "Про …"»)."""
    return sorted(found, key=lambda c: c.how == "source" or c.in_passing)


class _Heads:
    """The next mention of an article ("ст. 36") or of an act's final provisions, whichever comes first. Each
    pattern's last match is kept until the reading passes it: searching both from every mention again rescanned the
    rest of the text for the rarer one each time (a 136,000-character text of 4,000 mentions took 11 s, not 0.1)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.last: dict[re.Pattern[str], re.Match[str] | None] = {}
        self.searches = 0

    def _from(self, pattern: re.Pattern[str], pos: int) -> re.Match[str] | None:
        if pattern in self.last:
            kept = self.last[pattern]
            if kept is None or kept.start() >= pos:
                return kept
        found = pattern.search(self.text, pos)
        self.searches += 1
        self.last[pattern] = found
        return found

    def next(self, pos: int) -> re.Match[str] | None:
        found = [m for m in (self._from(_HEAD, pos), self._from(_FINAL_HEAD, pos)) if m is not None]
        return min(found, key=lambda m: m.start()) if found else None


def _numbers(text: str, m: re.Match[str]) -> tuple[list[str], int]:
    if m.re is _FINAL_HEAD:
        return [FINAL_PROVISIONS], m.end()
    nums, end = [m.group("num")], m.end()
    while True:
        more = _MORE.match(text, end)
        if more is None or not _LIST_END.match(text, more.end()):
            return nums, end
        nums.append(more.group(1))
        end = more.end()


def find_citations(text: str, labels: Mapping[str, str], *, titles: Mapping[str, str] | None = None,
                   evidence: Iterable[str] = ()) -> list[FoundCitation]:
    """``labels`` maps each known act label to its nreg, the act's canonical label first; ``titles`` (optional)
    maps catalog titles and aliases to nregs; ``evidence`` holds canonical refs, used only to place a mention
    that names no act."""
    names = _names_of(labels, titles)
    by_article: dict[str, list[tuple[str, str | None]]] = {}
    for ref in dict.fromkeys(evidence):
        label, article = split_ref(ref)
        entry = (label, labels.get(label))
        if article and entry not in by_article.setdefault(article, []):
            by_article[article].append(entry)
    out: list[FoundCitation] = []
    consumed = 0  # a name already read as the act of the previous mention is not read again
    pos = 0
    heads = _Heads(text)
    while (m := heads.next(pos)) is not None:
        nums, nums_end = _numbers(text, m)
        before = _act_before(names, text, m.start(), consumed, comma=m.re is _FINAL_HEAD)
        after = _act_after(names, text, nums_end, out)
        # A known act wins over an unknown one; the canonical form (act first) wins a tie.
        act = next((a for a in (before, after) if a is not None and a.nreg is not None), None)
        act = act or next((a for a in (after,) if a is not None and a.how == "unbound"), None) or before or after
        start = min(m.start(), act.start) if act is not None else m.start()
        end = max(nums_end, act.end) if act is not None else nums_end
        part = (m.group("part") or "").strip() or None
        inherited = _same_sentence_act(text, m.start(), out) if act is None else None
        for num in nums:
            bound = act if act is not None and act.how != "unbound" else None
            if act is None:
                bound = inherited or _from_evidence(num, by_article)
            if bound is None:
                out.append(FoundCitation("", num, None, start, end, "unbound", part))
            else:
                out.append(FoundCitation(bound.label, num, bound.nreg, start, end, bound.how, part))
        consumed = pos = end
    placed = [_quoted_source(text, c, out[:i], out[i + 1:]) for i, c in enumerate(out)]
    return [replace(c, in_passing=True) if _mentioned_in_passing(text, c, placed[i + 1:]) else c
            for i, c in enumerate(placed)]


def citation_keys(refs: Collection[str], labels: Mapping[str, str]) -> set[tuple[str, str]]:
    """Refs as (act, article) keys: the nreg when the label is known, so two labels of one act compare equal."""
    keys = set()
    for ref in refs:
        label, article = split_ref(ref)
        keys.add(((labels.get(label) or label).lower(), article))
    return keys


def citation_key(c: FoundCitation) -> tuple[str, str]:
    return ((c.act_nreg or c.label).lower(), c.article)
