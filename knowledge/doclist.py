"""DocList resolution: which act of the catalog does a name, abbreviation or registration number mean, and does
LLDBI index it (seed 002). Exact cues first — registration or official number, abbreviation, the exact or
inflected title or alias — and only when none matches, a broader match of the name's words against titles,
which is where ambiguity lives ("процесуальний кодекс"). Pure: the catalog arrives as rows (see selectors).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from legaltext.lexicon import AMENDING_STEM, GENERIC_TITLE_WORDS, NAME_STEM, find_nregs, is_amending_title, lemma_seq
from legaltext.text import STOPWORDS, lemma, normalize, words
from pipeline.contracts import (
    ACT_FOUND_AND_INDEXED,
    ACT_FOUND_IN_CATALOG_NOT_INDEXED,
    ACT_NOT_FOUND_IN_CATALOG,
    AMBIGUOUS_ACT_MATCH,
)

How = Literal["nreg", "official_number", "abbreviation", "title", "alias", "partial_title"]

# Nouns that head an act's name; the broad match looks at the words right before them ("процесуального кодексу").
_HEADS = frozenset(s[:NAME_STEM] for s in ("кодекс", "конституція", "статут", "положення", "регламент", "правило"))
BROAD_MARGIN = 0.75  # broad candidates scoring below this share of the best are noise, not alternatives
# The least share of a title's words the user's words must make up in the broad match, unless they are the words
# the title opens with. «закон про подарунки» met «подарунк» at the end of five tax acts on children's New Year gifts
# (1 word of 10–19) and asked the user to choose among them. A name people use says most of the title («процесуальний
# кодекс»: 2 of 3 words of each procedural code's) or its subject, which comes first («закон про біженців»: «Про
# біженців та осіб, які потребують додаткового або тимчасового захисту»).
BROAD_MIN_COVER = 0.3
_OFFICIAL_NUMBER = re.compile(r"\b(\d{1,5})-([IVXLC]{1,6})\b")
_QUESTION_WORDS = frozenset({"що", "передбачати", "говорити", "казати", "встановлювати", "визначати", "сказати",
                             "норма", "положення", "який", "згідно", "відповідно"})
_STOP_STEMS = frozenset(w[:NAME_STEM] for w in STOPWORDS | _QUESTION_WORDS) - _HEADS


def _stems_with_positions(text: str) -> list[tuple[str, int]]:
    """``lemma_seq`` with the index of each stem's word, to look at the words before a matched name."""
    out = []
    for i, w in enumerate(words(text)):
        lem = lemma(w)
        if lem not in GENERIC_TITLE_WORDS:
            out.append((lem[:NAME_STEM], i))
    return out


@dataclass(frozen=True)
class DoclistCandidate:
    nreg: str
    title: str
    abbreviations: tuple[str, ...]
    indexed: bool
    score: float
    how: How

    def as_dict(self) -> dict[str, Any]:
        return {"nreg": self.nreg, "title": self.title, "abbreviations": list(self.abbreviations),
                "indexed": self.indexed, "score": round(self.score, 4), "how": self.how}


@dataclass(frozen=True)
class DoclistResolution:
    query: str
    reason: str  # a DocList reason code (pipeline/contracts.py)
    candidates: tuple[DoclistCandidate, ...] = ()

    @property
    def best(self) -> DoclistCandidate | None:
        return self.candidates[0] if self.candidates else None

    def as_dict(self) -> dict[str, Any]:
        return {"query": self.query, "reason": self.reason, "candidates": [c.as_dict() for c in self.candidates]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DoclistResolution:
        return cls(str(data.get("query", "")), str(data["reason"]), tuple(
            DoclistCandidate(str(c["nreg"]), str(c.get("title") or ""), tuple(c.get("abbreviations") or ()),
                             bool(c.get("indexed")), float(c.get("score", 0.0)), c.get("how", "title"))
            for c in data.get("candidates") or ()))


@dataclass(frozen=True)
class _Entry:
    nreg: str
    title: str
    abbreviations: tuple[str, ...]
    numbers: tuple[str, ...]  # official numbers such as 2811-IX
    names: tuple[tuple[str, ...], ...]  # stem sequences of the title (first) and the aliases
    indexed: bool

    def candidate(self, score: float, how: How) -> DoclistCandidate:
        return DoclistCandidate(self.nreg, self.title, self.abbreviations, self.indexed, score, how)


@dataclass
class Doclist:
    entries: list[_Entry] = field(default_factory=list)
    by_nreg: dict[str, _Entry] = field(default_factory=dict)
    by_number: dict[str, list[_Entry]] = field(default_factory=dict)
    by_abbrev: dict[str, list[_Entry]] = field(default_factory=dict)
    by_name: dict[tuple[str, ...], list[_Entry]] = field(default_factory=dict)
    by_stem: dict[str, set[int]] = field(default_factory=dict)
    max_candidates: int = 8

    @classmethod
    def build(cls, rows: Iterable[Mapping[str, Any]], *, max_candidates: int = 8) -> Doclist:
        dl = cls(max_candidates=max_candidates)
        for r in rows:
            title = str(r.get("title") or "")
            names = [lemma_seq(title)] if title else []
            names += [lemma_seq(str(a)) for a in r.get("aliases") or []]
            names = [n for n in dict.fromkeys(names) if n]
            entry = _Entry(str(r["nreg"]), title, tuple(str(a) for a in r.get("abbreviations") or []),
                           tuple(str(n).upper() for n in r.get("official_numbers") or []), tuple(names),
                           bool(r.get("indexed")))
            i = len(dl.entries)
            dl.entries.append(entry)
            dl.by_nreg[entry.nreg.lower()] = entry
            for number in entry.numbers:
                dl.by_number.setdefault(number, []).append(entry)
            for a in entry.abbreviations:
                dl.by_abbrev.setdefault(a.casefold(), []).append(entry)
            for n in entry.names:
                dl.by_name.setdefault(n, []).append(entry)
                for stem in n:
                    dl.by_stem.setdefault(stem, set()).add(i)
        return dl

    # --- exact cues ---------------------------------------------------------------------------------------
    def _exact(self, text: str) -> list[tuple[str, list[DoclistCandidate]]]:
        """(matched text, candidates) per cue; a cue with several acts is ambiguous by itself."""
        cues: list[tuple[str, list[DoclistCandidate]]] = []
        for nreg, _, _ in find_nregs(text):
            if (e := self.by_nreg.get(nreg.lower())) is not None:
                cues.append((nreg, [e.candidate(1.0, "nreg")]))
        bare = text.strip().lstrip("№").strip().lower()
        if bare in self.by_nreg and not cues:
            cues.append((bare, [self.by_nreg[bare].candidate(1.0, "nreg")]))
        for m in _OFFICIAL_NUMBER.finditer(text.upper()):
            found = self.by_number.get(m.group(0), [])
            if found:
                cues.append((m.group(0), [e.candidate(1.0, "official_number") for e in found]))
        by_token: dict[str, list[DoclistCandidate]] = {}
        for tok in re.findall(r"[0-9A-Za-zА-Яа-яІіЇїЄєҐґ'’ʼ]+", text):
            # two-letter abbreviations (ЦК, КК) only in capitals: "цк" in running text is not a name
            if len(tok) <= 2 and tok != tok.upper():
                continue
            for e in self.by_abbrev.get(tok.casefold(), []):
                by_token.setdefault(tok, []).append(e.candidate(1.0, "abbreviation"))
        cues += [(tok, list({c.nreg: c for c in found}.values())) for tok, found in by_token.items()]
        positioned = _stems_with_positions(text)
        seq = tuple(s for s, _ in positioned)
        ws = words(text)
        covered: set[int] = set()
        for n in range(len(seq), 1, -1):  # longest names first: "цивільний процесуальний кодекс" before "…кодекс"
            for i in range(len(seq) - n + 1):
                span = seq[i:i + n]
                found_names = self.by_name.get(span, [])
                if not found_names or covered & set(range(i, i + n)):
                    continue
                if span != seq and all(e.title.startswith("Про ") for e in found_names):
                    # a law's title is its subject ("Про податок з доходів фізичних осіб"): inside a longer
                    # text it names the law only after "закон" — else it is the question's topic
                    start = positioned[i][1]
                    if not any(w.startswith("закон") for w in ws[max(0, start - 3):start]):
                        continue
                covered |= set(range(i, i + n))
                score = 1.0 if span == seq else 0.9
                cands = [e.candidate(score, "title" if e.names and e.names[0] == span else "alias")
                         for e in found_names]
                titles = [c for c in cands if c.how == "title"]
                cues.append((" ".join(span), titles if len(titles) == 1 else cands))
        return cues

    # --- broad match --------------------------------------------------------------------------------------
    def _name_phrase(self, text: str) -> tuple[str, ...]:
        """The words that name an act: the whole text when it is short, else the words before a head noun
        ("процесуального кодексу") or after "закон про"."""
        ws = words(text)
        stems = [lemma(w)[:NAME_STEM] for w in ws]
        content = [s for s in stems if s not in _STOP_STEMS and not s.isdigit() and s not in ("закон", "україн")]
        if len(content) <= 4:
            return tuple(content)
        for i, s in enumerate(stems):
            if s in _HEADS:
                j = i
                while j > 0 and i - j < 3 and stems[j - 1] not in _STOP_STEMS and not stems[j - 1].isdigit():
                    j -= 1
                return tuple(stems[j:i + 1])
            if s == "закон" and i + 1 < len(stems) and ws[i + 1] == "про":
                return tuple(x for x in stems[i + 2:i + 6] if x not in _STOP_STEMS)
        return ()

    def _broad(self, text: str) -> list[DoclistCandidate]:
        phrase = set(self._name_phrase(text))
        if not phrase or (len(phrase) == 1 and not phrase & _HEADS and len(next(iter(phrase))) < 5):
            return []
        pools = [self.by_stem.get(s, set()) for s in phrase]
        ids = set.intersection(*pools) if pools else set()
        # an amending law («закон про пенсії про страховий стаж» named one on disability pensions) only when the name
        # says «внесення»
        amending_asked = AMENDING_STEM in phrase
        scored: list[DoclistCandidate] = []
        for i in ids:
            e = self.entries[i]
            if not amending_asked and is_amending_title(e.title):
                continue
            names = [n for n in e.names if phrase <= set(n)]
            cover = max((len(phrase) / len(set(n)) for n in names), default=0.0)
            # or the name's words open the title («закон про біженців»: «Про біженців та осіб, які потребують …»)
            if cover >= BROAD_MIN_COVER or any(set(n[:len(phrase)]) == phrase for n in names):
                scored.append(e.candidate(0.8 * cover, "partial_title"))
        scored.sort(key=lambda c: (-c.score, not c.indexed, c.nreg))
        return [c for c in scored if c.score >= BROAD_MARGIN * scored[0].score] if scored else []

    def resolve(self, query: str) -> DoclistResolution:
        text = normalize(query)
        if not text:
            return DoclistResolution(query, ACT_NOT_FOUND_IN_CATALOG)
        cues = self._exact(text)
        if cues:
            ambiguous = [c for _, c in cues if len({x.nreg for x in c}) > 1]
            if ambiguous:
                return DoclistResolution(query, AMBIGUOUS_ACT_MATCH, tuple(ambiguous[0][: self.max_candidates]))
            found = list({c[0].nreg: c[0] for _, c in cues}.values())[: self.max_candidates]
            reason = ACT_FOUND_AND_INDEXED if all(c.indexed for c in found) else ACT_FOUND_IN_CATALOG_NOT_INDEXED
            return DoclistResolution(query, reason, tuple(found))
        broad = self._broad(text)
        if not broad:
            return DoclistResolution(query, ACT_NOT_FOUND_IN_CATALOG)
        if len(broad) > 1:
            return DoclistResolution(query, AMBIGUOUS_ACT_MATCH, tuple(broad[: self.max_candidates]))
        only = broad[0]
        return DoclistResolution(query, ACT_FOUND_AND_INDEXED if only.indexed else ACT_FOUND_IN_CATALOG_NOT_INDEXED,
                                 (only,))
