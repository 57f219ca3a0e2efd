"""The act lexicon U2 matches questions against: abbreviations, titles and aliases of catalog acts.
Built once from the catalog by the shell and passed in as plain data."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from legaltext.chunking import act_label, preferred_abbreviation
from legaltext.text import lemma

_D = TypeVar("_D")

# Title words that say nothing about which act is meant.
GENERIC_TITLE_WORDS = frozenset({"україна", "закон", "про", "і", "та", "й", "в", "у", "з", "із", "на"})
PRO = "про"  # kept only to anchor a one-word law title ("Про відпустки"), see ActLexicon.build
_PRO_NAME = re.compile(r"^(?:(?:закон|зу)\s+(?:україни\s+)?)?«?про\s", re.I)
# «Про внесення змін до …»: one of thousands of amending laws, whose titles hold the words of the act they amend. The
# stem is «внесення» as a name's stems read it (NAME_STEM letters).
AMENDING_STEM = "внесен"
_AMENDING_TITLE = re.compile(r"^про\s+внесення\s+змін", re.I)


def is_amending_title(name: str) -> bool:
    """Does a title (or the words after «закон») open as an amending law's: «Про внесення змін (зміни) до …»."""
    return bool(_AMENDING_TITLE.match(name.strip()))


@dataclass(frozen=True)
class LexiconEntry:
    nreg: str
    title: str
    abbreviations: tuple[str, ...]
    name_forms: tuple[tuple[str, ...], ...]  # lemma sequences of the title and aliases
    indexed: bool

    @property
    def label(self) -> str:
        return act_label(self.title, preferred_abbreviation(list(self.abbreviations)))


# Names are compared on the first letters of lemmas: pymorphy3 sometimes lemmatises an inflected adjective of a
# title as a noun ("Цивільного" → "цивільне", not "цивільний"); the stem is the same either way.
NAME_STEM = 6


_TOKEN = re.compile(r"[0-9A-Za-zА-Яа-яІіЇїЄєҐґ'’ʼ-]+")


def lemma_tokens(text: str, keep: frozenset[str] = frozenset()) -> list[tuple[str, int]]:
    """(name stem, character offset) of each meaningful word, in order."""
    out = []
    for m in _TOKEN.finditer(text):
        word = m.group(0).strip("-'").lower().replace("’", "'").replace("ʼ", "'")
        if not word:
            continue
        lem = lemma(word)
        if lem not in GENERIC_TITLE_WORDS or lem in keep:
            out.append((lem[:NAME_STEM], m.start()))
    return out


def lemma_seq(text: str, keep: frozenset[str] = frozenset()) -> tuple[str, ...]:
    return tuple(stem for stem, _ in lemma_tokens(text, keep))


@dataclass(frozen=True)
class ActLexicon:
    entries: tuple[LexiconEntry, ...] = ()
    by_nreg: dict[str, LexiconEntry] = field(default_factory=dict, compare=False)

    @classmethod
    def build(cls, rows: Iterable[Mapping[str, Any]]) -> ActLexicon:
        entries = []
        for r in rows:
            title = str(r.get("title") or "")
            forms = {lemma_seq(title)} if title else set()
            for alias in r.get("aliases") or []:
                forms.add(lemma_seq(str(alias)))
            forms = {f for f in forms if len(f) >= 2}  # one-word names ("кодекс") match everything
            # «Про відпустки»: the phrase "про відпустки"; an alias too («про мобілізацію», «закон про мобілізацію»
            # for «Про мобілізаційну підготовку та мобілізацію» was one word once «про» and «закон» were dropped)
            for name in [title, *(str(a) for a in r.get("aliases") or [])]:
                subject = lemma_seq(name)
                if _PRO_NAME.match(name) and len(subject) == 1:
                    forms.add((PRO, *subject))
            abbrevs = tuple(str(a) for a in (r.get("abbreviations") or []))
            entries.append(LexiconEntry(str(r["nreg"]), title, abbrevs, tuple(sorted(forms)),
                                        bool(r.get("indexed"))))
        return cls(tuple(entries), {e.nreg.lower(): e for e in entries})

    def get(self, nreg: str) -> LexiconEntry | None:
        return self.by_nreg.get(nreg.lower())

    def label_index(self) -> Mapping[str, LexiconEntry]:
        """Every printable label (abbreviations and «Закон «…»» labels) → entry, for citation parsing. Built once
        per lexicon and shared (U10, U11 and U12 each ask: 8,168 labels, ~25 ms a time in a fresh ``ask``), so
        read-only; a stored lexicon carries it."""
        return self.derived("label_index", self._build_label_index)

    def derived(self, name: str, build: Callable[[], _D]) -> _D:
        """A value computed from this lexicon once and kept beside it (an index a stage reads every run): read-only,
        not a field, not compared."""
        cached: _D | None = self.__dict__.get(f"_{name}")
        if cached is None:
            cached = build()
            object.__setattr__(self, f"_{name}", cached)  # a memo beside the fields: not compared, not a field
        return cached

    def label_nregs(self) -> Mapping[str, str]:
        """``label_index`` as label → nreg: the catalog layer of every run's citation labels, one object per lexicon
        (citations.EvidenceFirst keeps its parsed names per object). Read-only."""
        return self.derived("label_nregs", lambda: {label: e.nreg for label, e in self.label_index().items()})

    def title_nregs(self) -> Mapping[str, str]:
        """Catalog titles → nreg (acts with neither an abbreviation nor a «Про …» title are still recognised), one
        object per lexicon. Read-only."""
        return self.derived("title_nregs", lambda: {e.title: e.nreg for e in self.entries if e.title})

    def _build_label_index(self) -> dict[str, LexiconEntry]:
        out: dict[str, LexiconEntry] = {}
        # An indexed act owns a label it shares with a repealed namesake (Закон «Про державну службу»: 889-19,
        # not the 1993 law 3723-12 that the knowledge base does not hold).
        for e in sorted(self.entries, key=lambda e: not e.indexed):
            out.setdefault(e.label, e)
            for a in e.abbreviations:
                out.setdefault(a, e)
        return out


_NREG = re.compile(r"\b\d{1,5}[кk]?(?:/\d{2,4})?-(?:[ІIVX]+|вр|ВР|\d{2}|\d{4}-п)\b", re.I)


def find_nregs(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(0), m.start(), m.end()) for m in _NREG.finditer(text)]
