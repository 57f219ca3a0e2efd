"""Definition questions: "Що означає термін «X»?", "Що таке X?", "визначення поняття «X»". Pure.

Ukrainian acts define their terms as list items, mostly in an article headed "Визначення термінів", one item per
term among dozens, so the whole question's words (означає, законодавство …) drown the term: U2 finds the term,
U3 plans a lookup of it in the defined-terms index (knowledge/terms.py) before the ordinary search.
"""

from __future__ import annotations

import re

_DEFINITION = re.compile(
    r"(?:означа\w*|визначенн\w*|поняття|термін\w*|що\s+таке)\s+(?:термін\w*\s+|поняття\s+)?"
    r"(?:«\s*(?P<guillemets>[^»]{2,120}?)\s*»|[\"„“']\s*(?P<term>[^\"”']{2,120}?)\s*[\"”'])", re.I)


# Unquoted: "Що таке спадщина?", "Що означає поворот виконання рішення за ЦПК?" — a short phrase without numbers
# (a longer one is a question about a situation, not about a term).
_UNQUOTED = re.compile(
    r"^\s*(?:що\s+(?:таке|означає|означа[ює]ться|розуміють|розуміється\s+під)|як(?:е|ий)\s+визначення|"
    r"визначення\s+(?:терміну|термін|поняття))\s+(?:термін\w*\s+|поняття\s+)?"
    r"(?P<term>[^?«»\"\d,;]{2,80}?)\s*(?:\?|$|,|\s+(?:у|в|за|згідно)\s|"
    r"\s+(?:і|й|та)\s+(?:де|коли|як\w*|хто|чи|що|котр\w*|скільки|чому|навіщо)\b)", re.I)
UNQUOTED_TERM_MAX_WORDS = 6
_NOT_A_TERM_START = frozenset("для у в на з із зі до від про при по за мені мене мій моя моє мої цей ця це ці "
                              "його її їх нас вас він вона вони я ми ви".split())


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
    if len(term.split()) > UNQUOTED_TERM_MAX_WORDS or first in _NOT_A_TERM_START:
        return None
    return term, m.start("term"), m.end("term")


def definition_term(question: str) -> str | None:
    found = find_term(question)
    return found[0] if found else None
