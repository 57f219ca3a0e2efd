"""Split articles into chunks that keep their article reference. Pure: no I/O."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cached_property

from legaltext.text import normalize

SIGNED_TEXT_MIN_CHARS = 150
# The scale file titles 7,842 of its 8,164 acts "Закон України (<nreg>)": a citation "Закон України (322-08) ст. 75"
# helps no one, and the title's words are missing from what the signals index. The catalog's name replaces it.
_PLACEHOLDER_TITLE = re.compile(r"^\s*(?:Закон України|Акт)\s*\(\s*[^()]+\)\s*$|^\s*Акт\s+\S+\s*$")


def is_placeholder_title(title: str | None) -> bool:
    return not title or not title.strip() or bool(_PLACEHOLDER_TITLE.match(title))


_REPEALED = re.compile(r"виключено|втратил[аиоі]?\s+чинність|втратив\s+чинність", re.I)
REPEALED_STUB_MAX_CHARS = 200


def is_repealed_stub(text: str) -> bool:
    """«Статтю 163 виключено на підставі Закону …»: what is left of a repealed article, no provision at all."""
    return len(text.strip()) < REPEALED_STUB_MAX_CHARS and bool(_REPEALED.search(text))


@dataclass(frozen=True)
class Article:
    act_nreg: str
    act_title: str
    act_abbrev: str | None
    article: str
    heading: str | None
    text: str
    url: str = ""
    # An amending act repeats article numbers (one "Стаття 114" per code it amends): the n-th record of the same
    # act and number is occurrence n, so that each keeps its own chunks and snippets instead of overwriting.
    occurrence: int = 1
    # A repealed article's stub and a live text can share a number (КУпАП «163»): the number means the first record
    # of it that is not a stub; what is written about the number (lay questions) belongs to that one alone.
    primary: bool = True

    @property
    def storage_id(self) -> str:
        """The article's identity in keys: its number, plus the occurrence when the act repeats the number."""
        return self.article if self.occurrence == 1 else f"{self.article}~{self.occurrence}"

    @cached_property
    def text_signature(self) -> str | None:
        """The same text under two acts (an amending act quoting a code's article, three copies of КУпАП) is one
        provision to a reader: retrieval keeps one of them. Short texts ("{Статтю 5 виключено}") are not signed:
        equal stubs are not the same provision."""
        text = normalize(self.text)
        if len(text) < SIGNED_TEXT_MIN_CHARS:
            return None
        return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]

    @property
    def act_label(self) -> str:
        return act_label(self.act_title, self.act_abbrev)

    @property
    def article_ref(self) -> str:
        return article_ref(self.act_label, self.article)


@dataclass(frozen=True)
class Chunk:
    article: Article
    ordinal: int
    text: str

    @property
    def chunk_key(self) -> str:
        return f"{self.article.act_nreg.lower()}#st{self.article.storage_id}#c{self.ordinal}"


def act_label(title: str, abbrev: str | None) -> str:
    """How a citation names the act: its abbreviation, else «Закон «Про …»», else the title."""
    if abbrev:
        return abbrev
    if title.startswith("Про "):
        return f"Закон «{title}»"
    return title


def preferred_abbreviation(abbreviations: list[str]) -> str | None:
    """"КЗпП" over "КЗПП": the conventional spelling keeps its lower-case letters."""
    return next((a for a in abbreviations if a != a.upper()), abbreviations[0] if abbreviations else None)


# An act's final and transitional provisions (the source glues them to its last article: knowledge/ingest/corpus.py
# ``final_provisions``) are one unit of their own, keyed by this number-less "article" and cited by name: "ЦК,
# Прикінцеві та перехідні положення". One name for every act's: the source does not keep the section's own title.
FINAL_PROVISIONS = "ПП"
FINAL_PROVISIONS_NAME = "Прикінцеві та перехідні положення"
FINAL_PROVISIONS_SEP = ", "


def article_ref(act_label: str, article: str) -> str:
    """The canonical citation form used everywhere: "КЗпП ст. 36"; "ЦК, Прикінцеві та перехідні положення"."""
    if article == FINAL_PROVISIONS:
        return f"{act_label}{FINAL_PROVISIONS_SEP}{FINAL_PROVISIONS_NAME}"
    return f"{act_label} ст. {article}"


def split_ref(ref: str) -> tuple[str, str]:
    """"КЗпП ст. 36" -> ("КЗпП", "36"); "ЦК, Прикінцеві та перехідні положення" -> ("ЦК", "ПП")."""
    tail = f"{FINAL_PROVISIONS_SEP}{FINAL_PROVISIONS_NAME}"
    if ref.endswith(tail):
        return ref[:-len(tail)], FINAL_PROVISIONS
    label, _, article = ref.rpartition(" ст. ")
    return label, article


_SENTENCE_END = re.compile(r"(?<=[.;:!?])\s+|\n+")


def split_article(article: Article, *, max_chars: int, overlap_chars: int) -> list[Chunk]:
    """An article's chunks (``split_text``), each keeping its article reference."""
    return [Chunk(article, i, c)
            for i, c in enumerate(split_text(article.text, max_chars=max_chars, overlap_chars=overlap_chars))]


def split_text(raw: str, *, max_chars: int, overlap_chars: int) -> list[str]:
    """Cut at paragraph/sentence boundaries into pieces of at most ``max_chars``; a short overlap keeps
    the context of a part that continues the previous one. A single sentence longer than the bound is cut hard.
    Law articles and user documents are cut the same way."""
    if max_chars <= 0:
        raise ValueError("max_chars must be positive")
    # Normalise each paragraph on its own: normalize() turns every run of whitespace, newlines included,
    # into one space, and the paragraph breaks are cut points.
    text = "\n".join(p for p in (normalize(line) for line in raw.split("\n")) if p)
    if len(text) <= max_chars:  # an empty text is one empty chunk: an article's row exists even when blank
        return [text]
    pieces: list[str] = []
    for sentence in (s for s in _SENTENCE_END.split(text) if s.strip()):
        while len(sentence) > max_chars:
            pieces.append(sentence[:max_chars])
            sentence = sentence[max_chars:]
        pieces.append(sentence)
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        candidate = f"{current} {piece}".strip() if current else piece
        if len(candidate) <= max_chars:
            current = candidate
            continue
        chunks.append(current)
        tail = current[-overlap_chars:] if overlap_chars else ""
        tail = tail[tail.find(" ") + 1:] if " " in tail else tail
        current = f"{tail} {piece}".strip() if tail and len(tail) + len(piece) + 1 <= max_chars else piece
    if current:
        chunks.append(current)
    return chunks
