"""Defined terms: what an act says a word means, and which term a definition question asks about. Pure: no I/O.

Ukrainian acts define their terms as list items — "12) рецидив туберкульозу - активізація туберкульозу …;" —
mostly in an article headed "Визначення термінів", but also inside articles on principles, registers or
procedures. A question "Що означає термін «X»?" is answered by the item whose term *is* X; searching the
article text for X's words finds every article that uses X instead, and the whole question's words (означає,
законодавство …) drown the term. So each item's term is indexed on its own (``term_key``: its words' lemmas in
order, knowledge/searchindex.py), U2 finds the asked term (``find_term``) and U3 plans a lookup of it before the
ordinary search.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from legaltext.text import lemma, normalize, words

MAX_TERM_WORDS = 14  # a term is a name, not a sentence: longer "terms" are list items of another kind
MAX_TERM_CHARS = 200
DASH = r"\s[-–—]\s"
# "(далі - проба)": the short name a term goes by in the act; indexed as a term of its own.
_ALIAS = re.compile(r"\(\s*далі\s*[-–—]\s*(?P<alias>[^()]{1,80}?)\s*\)", re.I)
_ENUMERATED = re.compile(r"^\s*(?:\d+(?:\s*[-–]\s*\d+)*\s*\)|[а-яіїєґ]\s*\)|[•·*]|[-–—])\s*(?P<item>.+)$")
_DASH = re.compile(DASH)
_TERM_WORD = re.compile(r"^(?:термін(?:и|ом)?|поняття)\s+", re.I)
_QUOTES = "«»\"“”„'’"
# An item without a number counts only where the act announces definitions ("вживаються в такому значенні").
_ANNOUNCES = re.compile(r"в\s+такому\s+значенні\s*:?\s*$", re.I)
_GLOSS = re.compile(r"\(\s*([^()]{2,80}?)\s*\)")
_DEFINITION_CONTEXT = re.compile(r"значенні|визначення\s+термін|терміни|поняття", re.I)


def announces_terms(opening: str) -> bool:
    """Does a list's opening say its items define terms («… терміни вживаються в такому значенні:», «Визначення
    термінів»)? A dash inside an item of any other list («8) забезпечення права на апеляційний перегляд справи … - на
    касаційне оскарження …») is no definition."""
    return bool(_DEFINITION_CONTEXT.search(opening))


@dataclass(frozen=True)
class DefinedTerm:
    term: str  # as the act writes it
    key: str  # lemmas, in order: the form questions are matched in
    offset: int  # character offset of the item in the article text (to find its chunk)
    announced: bool = False  # the article says it defines terms (heading or "… в такому значенні:")


def term_key(text: str) -> str:
    return " ".join(lemma(w) for w in words(text))


def clean_term(raw: str) -> str:
    """A term as written, without the wrapping a question or an item puts around it: quotes, the word "термін",
    an alias in brackets and the half-open "(далі" that quotations cut off."""
    term = _ALIAS.sub(" ", raw)
    term = re.sub(r"\(\s*далі\b.*$", " ", term, flags=re.I)  # "допінг-проба (далі" cut in a quotation
    term = _TERM_WORD.sub("", term.strip())
    term = term.strip().strip(_QUOTES).strip()
    if term.count("(") > term.count(")"):  # "оптовий ринок … послуг (оптовий ринок": an unclosed gloss
        term = term[: term.rfind("(")]
    return normalize(term).strip(" ,;:").strip(_QUOTES).strip()


# A defined term is a noun phrase; list items such as "для працівників віком до 18 років - 36 годин" are not.
_NOT_A_TERM_START = frozenset("для на в у до після при під від з із зі за по про через щодо між понад".split())


def _plausible(term: str) -> bool:
    ws = words(term)
    return (0 < len(ws) <= MAX_TERM_WORDS and len(term) <= MAX_TERM_CHARS and not re.search(r"[;:!?]", term)
            and ws[0] not in _NOT_A_TERM_START)


# The codes' own style: "Трудовим договором є угода …", "Правочином є дія особи …", "Позовною давністю є строк …"
# — a sentence that opens with a short noun phrase (instrumental case) followed by "є"; lemmas make the case moot.
_COPULAR = re.compile(r"(?:^|(?<=[.;:]\s))\s*(?:\d+\.\s*)?(?P<term>[А-ЯІЇЄҐ][А-Яа-яІіЇїЄєҐґ'’ʼ\-]*"
                      r"(?:\s+[а-яіїєґ'’ʼ\-]+){0,4})\s+(?:є|визнається|вважається)\s+(?P<next>[^\s,]+)")
# "Правочин вважається таким, що вчинений у письмовій формі, якщо …" deems, it does not define: after the verb, a
# form of «такий» points to a condition, not to what the term is
_DEEMING = frozenset("таким такою такими такий таке такі".split())
_COPULAR_SKIP = frozenset("метою завданням підставою підставами умовою умовами предметом наслідком "
                          "особливістю винятком джерелом не також це цим ним нею ними таким такою такими він вона "
                          "воно вони україна".split())  # "Метою цього Закону є …", "Не є порушенням …" define nothing


def _add_copular(line: str, start: int, found: list[DefinedTerm], seen: set[str]) -> None:
    for m in _COPULAR.finditer(line):
        term = normalize(m.group("term"))
        if term.split()[0].lower() in _COPULAR_SKIP or m.group("next").lower() in _DEEMING or not _plausible(term):
            continue
        key = term_key(term)
        if key and key not in seen:
            seen.add(key)
            found.append(DefinedTerm(term=term, key=key, offset=start, announced=False))


def extract_terms(text: str, heading: str | None = None) -> list[DefinedTerm]:
    """The terms an article defines, in order. An item is a line "[N)] term - definition"; the term before the
    first dash that is not inside an alias bracket. A line that is no such item may still define a term the way
    the codes do ("Трудовим договором є угода …")."""
    context = bool(_DEFINITION_CONTEXT.search(heading or "")) or bool(_DEFINITION_CONTEXT.search(text[:600]))
    found: list[DefinedTerm] = []
    seen: set[str] = set()
    offset = 0
    for line in text.split("\n"):
        start = offset
        offset += len(line) + 1
        m = _ENUMERATED.match(line)
        item = m.group("item") if m else (line.strip() if context else "")
        if _ANNOUNCES.search(line):  # "… терміни вживаються в такому значенні:" — the items follow
            context = True
            continue
        if not item:
            _add_copular(line, start, found, seen)
            continue
        masked = _ALIAS.sub(lambda a: "(" + "_" * (len(a.group(0)) - 2) + ")", item)  # dashes inside (далі - X)
        dash = _DASH.search(masked)
        if dash is None:
            _add_copular(line, start, found, seen)
            continue
        raw = item[: dash.start()]
        term = clean_term(raw)
        # "держава-агресор (держава-окупант)": the term, the term without its gloss, and the gloss (a synonym)
        bare = _GLOSS.sub(" ", term)
        glosses = [g.group(1) for g in _GLOSS.finditer(term)]
        candidates = [term, normalize(bare).strip(), *glosses] + [clean_term(a.group("alias"))
                                                                  for a in _ALIAS.finditer(raw)]
        for term in candidates:
            if not _plausible(term):
                continue
            key = term_key(term)
            if key and key not in seen:
                seen.add(key)
                found.append(DefinedTerm(term=term, key=key, offset=start, announced=context))
    return found


# --- the term a definition question asks about ------------------------------------------------------------------
_DEFINITION = re.compile(
    r"(?:означа\w*|визначенн\w*|поняття|термін\w*|що\s+таке)\s+(?:термін\w*\s+|поняття\s+)?"
    r"(?:«\s*(?P<guillemets>[^»]{2,120}?)\s*»|[\"„“']\s*(?P<term>[^\"”']{2,120}?)\s*[\"”'])", re.I)


# Unquoted: "Що таке спадщина?", "Хто такий споживач?", "Що означає поворот виконання рішення за ЦПК?" — a short
# phrase without numbers
# (a longer one is a question about a situation, not about a term).
_UNQUOTED = re.compile(
    r"^\s*(?:що\s+(?:таке|означає|означа[ює]ться|розуміють|розуміється\s+під)|хто\s+так(?:ий|а|і)|"
    r"як(?:е|ий)\s+визначення|"
    r"визначення\s+(?:терміну|термін|поняття))\s+(?:термін\w*\s+|поняття\s+)?"
    r"(?P<term>[^?«»\"\d,;]{2,80}?)\s*(?:\?|$|,|\s+(?:у|в|за|згідно)\s|"
    r"\s+(?:і|й|та)\s+(?:де|коли|як\w*|хто|чи|що|котр\w*|скільки|чому|навіщо)\b)", re.I)
UNQUOTED_TERM_MAX_WORDS = 6
_NOT_AN_ASKED_TERM_START = frozenset("для у в на з із зі до від про при по за мені мене мій моя моє мої цей ця "
                                     "це ці його її їх нас вас він вона вони я ми ви".split())


def find_term(question: str) -> tuple[str, int, int] | None:
    """The term a question asks the meaning of, with its span in the question (where no act is named: «посада в
    органі місцевого самоврядування» is a term, not the Law on local self-government)."""
    m = _DEFINITION.search(question)
    if m:
        group = "guillemets" if m.group("guillemets") else "term"
        return m.group(group).strip(), m.start(group), m.end(group)
    m = _UNQUOTED.search(question)
    if m is None:
        return None
    term = m.group("term").strip()
    first = term.split()[0].lower() if term.split() else ""
    if len(term.split()) > UNQUOTED_TERM_MAX_WORDS or first in _NOT_AN_ASKED_TERM_START:
        return None
    return term, m.start("term"), m.end("term")


def definition_term(question: str) -> str | None:
    found = find_term(question)
    return found[0] if found else None


# --- matching a question's term against defined terms ------------------------------------------------------------
TERM_AVGDL = 3.0  # BM25 length norm of the term field: a term is a few words
DEFINITION_MIN_MATCH = 0.6  # below this word overlap a defined term is another term, not a form of the asked one
_DEFINITIONAL_HEADING = re.compile(r"термін|визначенн|поняття", re.I)


def match_score(query_key: str, defined_key: str) -> float:
    """1.0 for the same term; else, when the defined term holds every word of the asked one, the overlap of the two
    (Dice): "викуп цінних паперів" meets "викуп цінних паперів емітентом" at 0.86. A defined term lacking a word of
    the asked one is another term: "договір" is not "колективний договір" (0)."""
    if query_key == defined_key:
        return 1.0
    q, d = set(query_key.split()), set(defined_key.split())
    if not q or not d or not q <= d:
        return 0.0
    return 2 * len(q & d) / (len(q) + len(d))


def is_definitional(heading: str | None) -> bool:
    return bool(heading and _DEFINITIONAL_HEADING.search(heading))


Payload = dict[str, Any]  # a defined-term point's payload, as the search engine returns it


def rank_definitions(query_key: str, candidates: list[Payload], limit: int) -> list[tuple[Payload, float]]:
    """Defined-term points (payloads with ``term_key``) by how well their term matches the asked one; among equal
    matches an article that announces its definitions comes first, then one headed as such, then the order
    given."""
    best: dict[str, tuple[Payload, float, int]] = {}
    for i, payload in enumerate(candidates):
        score = match_score(query_key, str(payload.get("term_key", "")))
        if score < DEFINITION_MIN_MATCH:
            continue
        chunk = str(payload.get("chunk_key"))
        if chunk not in best or score > best[chunk][1]:
            best[chunk] = (payload, score, i)
    ordered = sorted(best.values(), key=lambda t: (-t[1], not t[0].get("announced"),
                                                   not is_definitional(t[0].get("heading")), t[2]))
    return [(p, s) for p, s, _ in ordered[:limit]]
