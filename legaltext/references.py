"""Article references as people write them in a question: «ст. 40 КЗпП», «ст 40» and «ст.40» (the dot left out or
the space), «статті 36 та 40», «ч. 2 ст. 40», the number first: «40 стаття», «40-ва стаття», and an act's
«прикінцеві та перехідні положення». Pure; read by U2
(which binds each to the act named beside it) and by the offline writer (which answers with the article named)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from legaltext.chunking import FINAL_PROVISIONS

_NUM = r"[0-9]+(?:[-‑–][0-9]+)?"  # ASCII digits: «ст. ٤٠» is no article number the law prints
# «статті 36, 38 і 40»: up to MORE_NUMBERS_MAX numbers more after the first
MORE_NUMBERS_MAX = 5
_PART = r"(?:ч\.\s*|частин[аиіуоюі]*\s+)(?P<part>\d+|[а-яіїєґ']+)\s*"
# «ст» without its dot counts only before a number: «ст 40», «ст40»; a word that merely ends in «ст» never does
_AFTER = re.compile(
    rf"(?:{_PART})?(?<![\w])(?:ст\.?|статт(?:я|і|ю|ею|ях|ям|ями)|статей)\s*(?P<num>{_NUM})(?![\w])"
    rf"(?P<more>(?:\s*(?:,|та|і|й)\s*{_NUM}(?![\w])){{0,{MORE_NUMBERS_MAX}}})",
    re.I,
)
_BEFORE = re.compile(rf"(?<![\w.,])(?P<num>{_NUM})(?:[-‑–]?(?:а|я|ва|тя|ма|ша|ї|ої))?\s+статт(?:я|і|ю|ею)(?![\w])",
                     re.I)


# An act's final and transitional provisions are one unit of their own (legaltext/chunking.py FINAL_PROVISIONS),
# named in a question by words, not a number: «у перехідних положеннях Закону про ЄСВ», «прикінцеві та перехідні
# положення Податкового кодексу», «прикінцеві положення». Read as a reference to that unit, so U2 binds it to the act
# named beside it and U4 fetches it like any named article.
_FINAL = re.compile(r"(?<![\w])(?:прикінцев[а-яії]*\s+(?:(?:та|і|й)\s+перехідн[а-яії]*\s+)?|перехідн[а-яії]*\s+)"
                    r"положен[а-яії]*(?![\w])", re.I)

_ORDINALS = {"перш": "1", "друг": "2", "трет": "3", "четверт": "4", "п'ят": "5", "шост": "6", "сьом": "7",
             "восьм": "8", "дев'ят": "9", "десят": "10"}


def part_number(raw: str | None) -> str | None:
    """«2» or «другої» → «2»; None when there is no part or no number in it."""
    if raw is None:
        return None
    if raw.isdigit():
        return raw
    for stem, n in _ORDINALS.items():
        if raw.lower().startswith(stem):
            return n
    return None


@dataclass(frozen=True)
class ArticleMention:
    numbers: tuple[str, ...]  # «36», «40-1»: the hyphen normalised
    part: str | None  # as written: «2», «другої»
    start: int
    end: int
    matched: str

    @property
    def part_no(self) -> str | None:
        return part_number(self.part)


def _number(raw: str) -> str:
    return re.sub(r"[‑–]", "-", raw)


def article_mentions(text: str) -> list[ArticleMention]:
    """Every article reference of ``text``, in order."""
    found = [ArticleMention(tuple(_number(n) for n in (m.group("num"), *re.findall(_NUM, m.group("more")))),
                            m.group("part"), m.start(), m.end(), m.group(0)) for m in _AFTER.finditer(text)]
    taken = [(f.start, f.end) for f in found]
    for m in _BEFORE.finditer(text):
        if not any(s < m.end() and m.start() < e for s, e in taken):
            found.append(ArticleMention((_number(m.group("num")),), None, m.start(), m.end(), m.group(0)))
    found += [ArticleMention((FINAL_PROVISIONS,), None, m.start(), m.end(), m.group(0)) for m in _FINAL.finditer(text)]
    return sorted(found, key=lambda f: f.start)


def article_numbers(text: str) -> list[str]:
    """The article numbers ``text`` names, each once, in order."""
    return list(dict.fromkeys(n for m in article_mentions(text) for n in m.numbers))


def without_mentions(text: str) -> str:
    """``text`` with its article references blanked out."""
    out, pos = [], 0
    for m in article_mentions(text):
        out.append(text[pos:m.start])
        out.append(" ")
        pos = m.end
    return "".join([*out, text[pos:]])
