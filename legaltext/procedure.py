"""Which procedural code a question's dispute goes by.

Ukraine's four procedural codes say much the same things in much the same words — a claim's fee, a representative,
an appeal's term — but each governs its own court: the Code of Administrative Procedure (КАС) a dispute with a body
or an official that wields public power (КАС ст. 19), the Commercial Procedure Code (ГПК) a dispute between
businesses (ГПК ст. 20), the Criminal Procedure Code (КПК) a criminal case, and the Civil Procedure Code (ЦПК) every
case no other procedure takes (ЦПК ст. 19): a person's dispute with an employer, a seller, a spouse, a debtor. A lay
question rarely names the court, but it names the other side, and that decides which code answers it.
"""

from __future__ import annotations

import re
from typing import Literal

Court = Literal["administrative", "commercial", "criminal", "civil"]

# Matched on the question's lower-cased words by their beginnings, so every case form counts.
_CRIMINAL = re.compile(
    r"\b(?:злочин|кримінальн|слідч|підозр|обвинувач|вирок|прокурор|обшук|зізнанн|посадят|посадити|тюрм|в'язниц|"
    r"запобіжн|досудов)", re.I)
_ADMINISTRATIVE = re.compile(
    r"\b(?:міськрад|сільрад|селищн\w* рад|міськ\w* рад|сільськ\w* рад|райрад|обласн\w* рад|виконком|мері[яїює]|"
    r"органу? (?:влади|місцевого самоврядування)|владн|державн\w* орган|чиновник|держслужб|податков|"
    r"пенсійн\w* фонд|пфу\b|тцк|військкомат|патрульн|поліцейськ|митниц|міністерств|цнап|рацс|назк|соцзахист|"
    r"соціальн\w* захист|держадміністраці|райдержадміністраці|облдержадміністраці|ода\b|рда\b|держпраці|дабі|"
    r"адміністративн\w* (?:суд|процес|справ|судочинств|позов|юрисдикці))",
    re.I)
_COMMERCIAL = re.compile(
    r"\b(?:господарськ|тов\b|фірм\w*-|наш\w* (?:фірм|тов\b|підприємств|компані)|постачальник|поставк|"
    r"контрагент|банкрутств)", re.I)

# The codes by their labels in a source's reference: the catalog's abbreviation or the words of the title.
_CODES: tuple[tuple[Court, re.Pattern[str]], ...] = (
    ("administrative", re.compile(r"^КАС\b|адміністративного\s+судочинства", re.I)),
    ("commercial", re.compile(r"^ГПК\b|господарський\s+процесуальний", re.I)),
    ("criminal", re.compile(r"^КПК\b|кримінальний\s+процесуальний", re.I)),
    ("civil", re.compile(r"^ЦПК\b|цивільний\s+процесуальний", re.I)),
)


def court_of(question: str) -> Court:
    """The court whose code governs the question's dispute: criminal words first (a case against the state's
    prosecutor), then a public body or official (or the administrative court named: «в адміністративному процесі»;
    exam_dev hit@1 0.813 → 0.827, the other sets unchanged, session 35), then a business on both sides; a person's
    dispute otherwise."""
    text = question.lower()
    if _CRIMINAL.search(text):
        return "criminal"
    if _ADMINISTRATIVE.search(text):
        return "administrative"
    if _COMMERCIAL.search(text):
        return "commercial"
    return "civil"


def code_court(label: str) -> Court | None:
    """The court a procedural code governs, from the act's label in a reference («КАС», «Цивільний процесуальний
    кодекс України»); None: not a procedural code."""
    for court, pattern in _CODES:
        if pattern.search(label.strip()):
            return court
    return None
