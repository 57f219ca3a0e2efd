"""The corpus file: law articles as JSONL records (the core file's or the scale file's format), read as ``Article``s,
and the text each search signal indexes of an article."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from knowledge.ingest.jsonl import IngestError, numbered_lines
from legaltext.chunking import (
    FINAL_PROVISIONS,
    FINAL_PROVISIONS_NAME,
    Article,
    Chunk,
    is_placeholder_title,
    is_repealed_stub,
    split_text,
)
from legaltext.sentences import conduct, meaning_sentences, split_sentences, without_notes
from legaltext.text import words

logger = logging.getLogger(__name__)

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


# The source glues an act's final and transitional provisions onto its last article as well: ЦК ст. 1308 (240
# characters of its own) ran on for 38,000 with «ПРИКІНЦЕВІ ТА ПЕРЕХІДНІ ПОЛОЖЕННЯ 1. Цей Кодекс набирає чинності…»,
# and answers cited «Закон … ст. 115» for the pension law's transitional rules — in 32 of the 45 core acts. They
# start at their heading when the source kept it, else at «1. Цей Закон набирає чинності», else (the procedure codes'
# transitional provisions, whose heading is lost) at a numbering that starts again with a commencement rule.
_FINAL_HEADING = re.compile(
    r"(?m)^[ \t]*(?:(?:Розділ|РОЗДІЛ|Глава|ГЛАВА)[ \t]+[IVXLCІ\d]+\.?[ \t]*\n\s*)?(?:[IVXLCІ]+\.[ \t]*)?"
    r"(?P<title>(?:ПРИКІНЦЕВІ|ПЕРЕХІДНІ|ЗАКЛЮЧНІ|Прикінцеві|Перехідні|Заключні)"
    r"(?:[ \t]+(?:ТА|І|та|і)[ \t]+(?:ПЕРЕХІДНІ|ПРИКІНЦЕВІ|перехідні|прикінцеві))?[ \t]+(?:ПОЛОЖЕННЯ|положення))[ \t]*$")
_IN_FORCE = re.compile(r"(?m)^[ \t]*(?P<n>\d+)\.[ \t]*Цей[ \t]+(?:Закон|Кодекс)[ \t]+набирає[ \t]+чинності")
_FIRST_ITEM = re.compile(r"(?m)^[ \t]*1\.[ \t]+(?P<line>[^\n]*)")
# «1. Частина друга статті 172 (…) вводиться в дію …»: a rule on when the act's own parts take effect (a treaty's
# «1. Порогова вартість … набирає чинності 1 січня» is a rule of its annex, not the act's commencement)
_COMMENCES = re.compile(r"^(?:Частин\w*|Стат\w*|Пункт\w*|Підпункт\w*|Абзац\w*|Розділ\w*|Положенн\w*)\b.*"
                        r"(?:набира\w*\s+чинності|вводиться\s+в\s+дію|вводяться\s+в\s+дію)")
# After final provisions that amend other acts, the source goes on with the amended articles, quoted and numbered as
# if the act's own (Закон «Про запобігання корупції» «ст. 172-5» is КУпАП's): a record that does not continue the
# act's numbering (within this gap of its last article) and that another act read before holds under the same number
# and heading (one that names its subject) is one of those. A quoted article no act of the file holds stays (the scale
# file's amending laws are often the only copy of the text they set out, and its evaluation keys them so); so does
# every record after final provisions that amend nothing (a budget law's «VI. ПРИКІНЦЕВІ ПОЛОЖЕННЯ» are its own
# articles 48-64).
FINAL_PROVISIONS_NEXT_MAX = 3
QUOTED_HEADING_MIN_WORDS = 4  # «Визначення термінів», «Сфера дії Закону» are many acts' article 1 or 2: no evidence
_AMENDS = re.compile(r"в\s+такій\s+редакції|такого\s+змісту")
# A record numbered as a division, not an article, whose first rule is about what stays in force: the
# Constitution's «Розділ XV Перехідні положення» arrived as «ст. XV», a citation no reader can find
_DIVISION_NUMBER = re.compile(r"^[IVXLC]+$")
_IN_FORCE_WORDS = re.compile(r"чинн\w*")


def final_provisions(text: str) -> tuple[str, str | None, str | None]:
    """The article's own text, and the act's final provisions glued after it (their title when the source kept
    one), or ``(text, None, None)``. Never leaves the article empty."""
    start, body_start, title = _final_start(text)
    if start is None or not text[:start].strip() or not text[body_start:].strip():
        return text, None, None
    return text[:start].rstrip(), text[body_start:].strip(), title


def _final_start(text: str) -> tuple[int | None, int, str | None]:
    """Where the final provisions start, where their text starts (after the heading) and the heading's title."""
    heading = _FINAL_HEADING.search(text)
    if heading is not None:
        title = heading.group("title")
        return heading.start(), heading.end(), title[0] + title[1:].lower()
    in_force = _IN_FORCE.search(text)
    if in_force is not None:
        if in_force.group("n") == "1":
            return in_force.start(), in_force.start(), None
        restarts = [m.start() for m in _FIRST_ITEM.finditer(text, 0, in_force.start()) if m.start() > 0]
        return (restarts[-1], restarts[-1], None) if restarts else (None, 0, None)
    for item in _FIRST_ITEM.finditer(text):
        if item.start() > 0 and _COMMENCES.match(item.group("line")):
            return item.start(), item.start(), None
    return None, 0, None


def _leading_number(article: str) -> int | None:
    found = re.match(r"\d+", article)
    return int(found.group()) if found else None


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
    # case-folded nreg -> the number of the article its final provisions follow, when they amend other acts
    closed: dict[str, int] = field(default_factory=dict)
    held: dict[tuple[str, str], str] = field(default_factory=dict)  # (number, heading) -> the first act holding it
    quoted: int = 0  # records skipped as another act's articles quoted in the final provisions

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

    def quoted_elsewhere(self, nreg: str, article: str, heading: str | None) -> bool:
        """Whether this record is another act's article, quoted after its act's final provisions (above)."""
        named = words(heading or "")
        act, key = nreg.lower(), (article, " ".join(named))
        holder = self.held.setdefault(key, act) if len(named) >= QUOTED_HEADING_MIN_WORDS else None
        last = self.closed.get(act)
        if last is None or holder in (None, act):
            return False
        number = _leading_number(article)
        if number is not None and last < number <= last + FINAL_PROVISIONS_NEXT_MAX:
            return False
        self.quoted += 1
        return True

    def articles(self, rec: dict[str, Any], nreg: str, article: str, text: str) -> list[Article]:
        """The record's article, and the act's final provisions as a unit of their own when glued to it; nothing
        for another act's article quoted after them."""
        title, abbrev = rec.get("act_title"), rec.get("act_abbrev")
        if is_placeholder_title(title) and nreg.lower() in self.names:
            title, catalog_abbrev = self.names[nreg.lower()]
            abbrev = abbrev or catalog_abbrev
        article, heading = _number_and_heading(article, _heading(rec))
        if self.quoted_elsewhere(nreg, article, heading):
            return []
        text, final, final_title = final_provisions(own_text(text))
        if _DIVISION_NUMBER.match(article) and _IN_FORCE_WORDS.search(text.split("\n", 1)[0]):
            article, heading = FINAL_PROVISIONS, heading or FINAL_PROVISIONS_NAME
        own = Article(act_nreg=nreg, act_title=title or f"Акт {nreg}", act_abbrev=abbrev, article=article,
                      heading=heading, text=text, url=rec.get("url") or "",
                      occurrence=self.occurrence(nreg, article), primary=self.primary(nreg, article, text))
        if final is None:
            return [own]
        number = _leading_number(article)
        if number is not None and _AMENDS.search(final):
            self.closed[nreg.lower()] = number
        return [own, replace(own, article=FINAL_PROVISIONS, heading=final_title or FINAL_PROVISIONS_NAME, text=final,
                             occurrence=self.occurrence(nreg, FINAL_PROVISIONS),
                             primary=self.primary(nreg, FINAL_PROVISIONS, final))]


def read_articles(path: Path, *, acts: set[str] | None = None, limit: int | None = None,
                  canonical: dict[str, str] | None = None,
                  names: dict[str, tuple[str, str | None]] | None = None,
                  read: list[int] | None = None) -> Iterator[Article]:
    """Stream articles from the corpus JSONL (core or scale format) without holding the file in memory.
    ``canonical`` maps a corpus id that is not an nreg ("ЗУ ЕК", case-folded) to the act's nreg (1089-20);
    ``names`` gives the catalog's title and abbreviation of an act (by case-folded nreg) for records that carry a
    placeholder title. ``read`` (a one-item counter), when given, counts the file's records as they are read: a
    record can give two units (an article and its act's final provisions) or none, so progress counts records."""
    reading = _Reading({a.lower() for a in acts} if acts else None, canonical or {}, names or {})
    n = 0
    for lineno, line in numbered_lines(path):
        rec, corpus_id, article, text = _record(path, lineno, line)
        if read is not None:
            read[0] += 1
        nreg = reading.canonical.get(str(corpus_id).lower(), corpus_id)
        if not reading.keeps(nreg, str(corpus_id)) or not text or not text.strip():
            continue
        for unit in reading.articles(rec, nreg, article, text):
            yield unit
            n += 1
            if limit is not None and n >= limit:
                return
    if reading.quoted:
        logger.info("corpus: %d records after their act's final provisions skipped (other acts' articles quoted "
                    "as amended)", reading.quoted, extra={"quoted_records": reading.quoted})


def chunk_header(a: Article) -> str:
    if a.article == FINAL_PROVISIONS:
        return f"{a.act_title}. {a.heading or FINAL_PROVISIONS_NAME}."
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
