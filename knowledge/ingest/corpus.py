"""The corpus file: law articles as JSONL records (the core file's or the scale file's format), read as ``Article``s,
and the text each search signal indexes of an article."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from knowledge.ingest.jsonl import IngestError, numbered_lines
from legaltext.chunking import Article, Chunk, is_placeholder_title, is_repealed_stub, split_text
from legaltext.sentences import conduct, meaning_sentences, split_sentences, without_notes

_TITLE_PREFIX = re.compile(r"^\s*Стаття\s+[0-9A-Za-zІіVX\-]+\.?\s*")
# The source files cut a twice-inserted number at its first part: КУпАП «Стаття 188-46-1. Незаконне здійснення
# лобіювання» arrives as article «188» headed «-46-1 . Незаконне …» — cited as ст. 188 (another offence) and sharing
# its number. The heading's leading "-46-1 ." belongs to the number.
_NUMBER_IN_HEADING = re.compile(r"^\s*-\s*(\d+(?:\s*-\s*\d+)*)\s*\.\s*")


# The source files glue onto an article what follows it in the act: the heading of the next chapter, section or
# paragraph («… Глава 84\n\nЗАГАЛЬНІ ПОЛОЖЕННЯ ПРО СПАДКУВАННЯ» ends ЦК ст. 1215) and, on an act's last article,
# the signatures («Голова Верховної Ради України\nЛ.КРАВЧУК»): 632 of the core's 8,101 articles. Neither is the
# article's: the next chapter's title made the article a match for its neighbours' subject, and a signature is no
# statement (U1-U4 on eval/natural unchanged within a question; README "Retrieval quality", session 36). A heading
# is a line opening with the division and its number, then at most four short lines that end no sentence (its
# title); a line that refers in lower case («цього Кодексу», «статті») is text.
_DIVISION_TRAILER = re.compile(
    r"\n[ \t]*(?:Глава|ГЛАВА|Розділ|РОЗДІЛ|Підрозділ|ПІДРОЗДІЛ|Параграф|§)[ \t]*[0-9IVXLCІ]+(?:-\d+)*\b"
    r"(?P<first>[^\n]{0,300})(?P<rest>(?:\n[^\n]{0,300}){0,4})\s*\Z")
_REFERS = re.compile(r"\b(?:цього|цієї|цим|статт\w*|частин\w*|пункт\w*|відповідно|згідно)\b")
_SIGNER_NAME = r"[А-ЯІЇЄҐ]\.\s?[А-ЯІЇЄҐ'’-]{2,}"  # «Л.КУЧМА», «Л. КУЧМА»
_SIGNATURE_LINE = (r"(?:(?:Заступник\s+|Виконуючий\s+обов'язки\s+)?(?:Голов\w*|Президент\w*|Секретар\w*)\b[^\n]{0,60}"
                   r"|Виконуючий\s+обов'язки|(?:Президії\s+)?Верховної\s+Ради[^\n]{0,40}|Української\s+РСР|України,?"
                   rf"|{_SIGNER_NAME})")
_SIGNATURE_TRAILER = re.compile(rf"(?:\n\s*{_SIGNATURE_LINE}[ \t]*)+\s*\Z")  # blank lines between its lines
SIGNATURE_TAIL_CHARS = 600  # the longest signature block of the core (the Presidium's four lines) is ~150
DIVISION_TAIL_CHARS = 1600  # a heading line and four title lines of at most 300 characters each
DIVISION_CUTS_MAX = 3  # headings stacked at an article's end: a part's, a section's, a chapter's
_SIGNER = re.compile(rf"(?m)^[ \t]*{_SIGNER_NAME}[ \t]*$")


def own_text(text: str) -> str:
    """The article's text without what the source glued after it: the signatures of the act's last article, the
    next division's heading (ЦК ст. 1215 without «Глава 84 ЗАГАЛЬНІ ПОЛОЖЕННЯ ПРО СПАДКУВАННЯ»). A text that would be
    left empty is kept whole."""
    out = text
    # only the end is read: a trailer is a few short lines, and the patterns' backtracking stays bounded
    signed = _SIGNATURE_TRAILER.search(out, max(len(out) - SIGNATURE_TAIL_CHARS, 0))
    if signed and _SIGNER.search(signed.group(0)):  # a signature block names its signer
        out = out[:signed.start()]
    for _ in range(DIVISION_CUTS_MAX):  # a section's heading above its first chapter's: one at a time
        cut = _DIVISION_TRAILER.search(out, max(len(out) - DIVISION_TAIL_CHARS, 0))
        if not cut or _REFERS.search(cut.group(0)) or not _is_title(cut.group("first"), cut.group("rest")):
            break
        out = out[:cut.start()]
    return out if out.strip() else text


def _is_title(first: str, rest: str) -> bool:
    """A division's title: its lines end no sentence (a title has no full stop, semicolon or colon at its end)."""
    lines = [first.strip().removeprefix("."), *rest.split("\n")[1:]]
    return all(not line.rstrip().endswith((".", ";", ":", ",")) for line in lines if line.strip())


def _heading(rec: dict[str, Any]) -> str | None:
    """The core file has ``article_heading``; the scale file has ``title`` = "Стаття 2. <heading>"."""
    heading = rec.get("article_heading")
    if heading:
        return str(heading)
    title = _TITLE_PREFIX.sub("", str(rec.get("title") or "")).strip()
    return title or None


def _number_and_heading(article: str, heading: str | None) -> tuple[str, str | None]:
    """The article's number and heading, with a number's tail that the source put into the heading moved back."""
    cut = _NUMBER_IN_HEADING.match(heading or "")
    if cut is None or heading is None:
        return article, heading
    tail = "-".join(re.findall(r"\d+", cut.group(1)))
    return f"{article}-{tail}", heading[cut.end():].strip() or None


def _record(path: Path, lineno: int, line: str) -> tuple[dict[str, Any], str, str, str]:
    """The record with its act nreg, article number and text, or the operator's error for this line."""
    try:
        rec = json.loads(line)
        nreg, article, text = rec["act_nreg"], str(rec["article"]), rec["text"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise IngestError(f"{path}:{lineno}: not a corpus record ({exc})") from exc
    return rec, nreg, article, text


@dataclass
class _Reading:
    """What a pass over the file keeps besides the current line: one small entry per article, bounded by the file
    and not by its text."""

    wanted: set[str] | None  # case-folded nregs or corpus ids to keep; None: every act
    canonical: dict[str, str]  # a corpus id that is not an nreg ("зу ек") -> the act's nreg (1089-20)
    names: dict[str, tuple[str, str | None]]  # case-folded nreg -> the catalog's title and abbreviation
    seen: dict[tuple[str, str], int] = field(default_factory=dict)  # (nreg, article) -> records so far
    live: set[tuple[str, str]] = field(default_factory=set)  # (nreg, article) whose text has been read, not a stub

    def keeps(self, nreg: str, corpus_id: str) -> bool:
        return self.wanted is None or nreg.lower() in self.wanted or corpus_id.lower() in self.wanted

    def occurrence(self, nreg: str, article: str) -> int:
        key = (nreg.lower(), article)
        self.seen[key] = self.seen.get(key, 0) + 1
        return self.seen[key]

    def primary(self, nreg: str, article: str, text: str) -> bool:
        """Whether this record is the one its number means: the first that is not a repealed stub."""
        key = (nreg.lower(), article)
        if is_repealed_stub(text) or key in self.live:
            return False
        self.live.add(key)
        return True

    def article(self, rec: dict[str, Any], nreg: str, article: str, text: str) -> Article:
        title, abbrev = rec.get("act_title"), rec.get("act_abbrev")
        if is_placeholder_title(title) and nreg.lower() in self.names:
            title, catalog_abbrev = self.names[nreg.lower()]
            abbrev = abbrev or catalog_abbrev
        article, heading = _number_and_heading(article, _heading(rec))
        text = own_text(text)
        return Article(act_nreg=nreg, act_title=title or f"Акт {nreg}", act_abbrev=abbrev, article=article,
                       heading=heading, text=text, url=rec.get("url") or "",
                       occurrence=self.occurrence(nreg, article), primary=self.primary(nreg, article, text))


def read_articles(path: Path, *, acts: set[str] | None = None, limit: int | None = None,
                  canonical: dict[str, str] | None = None,
                  names: dict[str, tuple[str, str | None]] | None = None) -> Iterator[Article]:
    """Stream articles from the corpus JSONL (core or scale format) without holding the file in memory.
    ``canonical`` maps a corpus id that is not an nreg ("ЗУ ЕК", case-folded) to the act's nreg (1089-20);
    ``names`` gives the catalog's title and abbreviation of an act (by case-folded nreg) for records that carry a
    placeholder title."""
    reading = _Reading({a.lower() for a in acts} if acts else None, canonical or {}, names or {})
    n = 0
    for lineno, line in numbered_lines(path):
        rec, corpus_id, article, text = _record(path, lineno, line)
        nreg = reading.canonical.get(str(corpus_id).lower(), corpus_id)
        if not reading.keeps(nreg, str(corpus_id)) or not text or not text.strip():
            continue
        yield reading.article(rec, nreg, article, text)
        n += 1
        if limit is not None and n >= limit:
            return


def chunk_header(a: Article) -> str:
    return f"{a.act_title}. Стаття {a.article}." + (f" {a.heading}." if a.heading else "")


def embedding_text(chunk: Chunk) -> str:
    """What the lexical signal indexes: the act title and heading make every chunk findable by them."""
    return f"{chunk_header(chunk.article)} {chunk.text}"


def dense_text(article: Article, head_chars: int) -> str:
    """What the dense model sees, once per article: title, heading and the opening of the text. The model's
    cost grows faster than linearly with length, and an article's opening says what it is about."""
    return f"{chunk_header(article)} {article.text[:head_chars]}"


def article_sentences(article: Article, *, max_sentences: int, max_chars: int,
                      asked: Sequence[str] = ()) -> list[str]:
    """What the meaning rerank compares with a question: the article's first sentences (``legaltext.sentences``,
    the offline writer's own split, so the writer finds their vectors by text), or for a text too short to hold
    one, its text or heading whole — every article gets at least one when any are stored; then the questions people
    ask that it answers (``asked``: knowledge/ingest/lay_questions.py)."""
    if max_sentences <= 0:
        return []
    found = meaning_sentences(article.text, max_sentences=max_sentences, max_chars=max_chars)
    whole = (article.text.strip() or (article.heading or "").strip())[:max_chars]
    said = found or ([whole] if whole else [])
    return list(dict.fromkeys([*said, *(q[:max_chars] for q in asked)]))


def evidence_sentences(article: Article, *, max_chars: int, chunk_chars: int, overlap_chars: int,
                       max_chunks: int) -> list[str]:
    """The article's sentences as the offline writer weighs them: a law block is the heading over a chunk's text
    (paragraphs normalised, long articles' lines joined), its editors' notes cut, each sentence up to its sanction
    and ``max_chars`` — the writer's split. ``article_sentences`` reads the article's own text (U4's vectors);
    the two differ for ~21,600 of the core's ~57,000 forms (an apostrophe normalised, a list item joined to its
    opening), which the writer embedded again in every answer that weighed them (~0.2 s a run). Shipped beside
    them in the sentence cache, they are looked up by text instead."""
    head = f"{article.heading.strip()}\n" if article.heading and article.heading.strip() else ""
    chunks = split_text(article.text, max_chars=chunk_chars, overlap_chars=overlap_chars)[:max_chunks]
    forms = (conduct(s)[:max_chars] for chunk in chunks for s in split_sentences(without_notes(head + chunk)))
    return list(dict.fromkeys(forms))
