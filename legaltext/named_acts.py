"""Which of the evidence's acts a question names, read from the act's label in a source reference.

«Чи обов'язково служити в армії за Конституцією?» asks what the Constitution says; «Скільки років є, щоб подати в суд
на боржника за Цивільним кодексом» asks the Civil Code, not the procedural code beside it. U2 binds such names
against the catalog for the search; the writer sees only the labels its sources carry («КУ», «ЦК», «Закон «Про
відпустки»», «Житловий Кодекс України») and the question, as a model reading the prompt would. A code is cited by its
abbreviation, so the names people call the codes by are listed here; a law's label carries its title, matched after
the word «закон».
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from legaltext.lexicon import GENERIC_TITLE_WORDS
from legaltext.text import readings, words

LAW = "закон"
# Words that say nothing about which act is meant, less «закон»: a law is named by «закон про …», and the word is what
# tells a law's title from the same words used as a topic.
_GENERIC = GENERIC_TITLE_WORDS - {LAW}
# A law's title is named by its first words after «закон»: «закон про військовий обов'язок» names Закон «Про
# військовий обов'язок і військову службу»; one word more would miss it, one fewer would take «закон про захист …»
# for every «Про захист …».
TITLE_WORDS = 2
# The codes by the abbreviation their citations carry, and the names people use for them.
CODE_NAMES: dict[str, tuple[str, ...]] = {
    "КУ": ("Конституція",),
    "ЦК": ("Цивільний кодекс",),
    "КК": ("Кримінальний кодекс",),
    "КЗпП": ("Кодекс законів про працю", "Трудовий кодекс"),
    "СК": ("Сімейний кодекс",),
    "ЗК": ("Земельний кодекс",),
    "ЖК": ("Житловий кодекс",),
    "ГК": ("Господарський кодекс",),
    "КУпАП": ("Кодекс про адміністративні правопорушення", "адмінкодекс"),
    "ЦПК": ("Цивільний процесуальний кодекс",),
    "КПК": ("Кримінальний процесуальний кодекс",),
    "ГПК": ("Господарський процесуальний кодекс",),
    "КАС": ("Кодекс адміністративного судочинства",),
    "БК": ("Бюджетний кодекс",),
    "ПК": ("Податковий кодекс",),
    "МК": ("Митний кодекс",),
}
# The other abbreviations people write for the codes («ст. 185 ККУ», «ст. 130 КпАП»), each matched as written.
CODE_ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "КЗпП": ("КЗоТ", "КЗпПУ"), "ЦК": ("ЦКУ",), "КК": ("ККУ",), "СК": ("СКУ",), "ЗК": ("ЗКУ",), "ЖК": ("ЖКУ",),
    "ГК": ("ГКУ",),
    "КУпАП": ("КпАП", "КУАП", "КоАП"), "ЦПК": ("ЦПКУ",), "КПК": ("КПКУ",), "ГПК": ("ГПКУ",), "КАС": ("КАСУ",),
}
# The case endings people add to an abbreviation declined as a word («по КЗоТу», «за КУпАПом»).
CASE_ENDING = r"(?:у|ю|і|а|ом|ем|ові)"
_LAW_LABEL = re.compile(r"^Закон\s+«(?P<title>.+)»$")
# An abbreviation of two or three letters is matched as written (ЦК, not «цк»); a longer one in any case (КЗПП).
SHORT_ABBREVIATION = 3


def _words(text: str) -> tuple[frozenset[str], ...]:
    """Every reading of each word (the analyser reads «Цивільним» as «цивільне» first), generic words left out."""
    read = (frozenset(readings(w)) for w in words(text))
    return tuple(r for r in read if not r & _GENERIC)


@lru_cache(maxsize=256)
def _names(label: str) -> tuple[tuple[tuple[frozenset[str], ...], bool], ...]:
    """Each name of the act as (lemmas, said after «закон»)."""
    law = _LAW_LABEL.match(label)
    if law:
        title = tuple(t for t in _words(law.group("title")) if LAW not in t)
        return ((title[:TITLE_WORDS], True),) if title else ()
    if " " not in label:  # an abbreviation: its names, if it is a code's; the abbreviation itself is matched as written
        return tuple((_words(n), False) for n in CODE_NAMES.get(label, ()))
    return ((_words(label), False),)  # a title: «Житловий Кодекс України»


def _holds(question: tuple[frozenset[str], ...], name: tuple[frozenset[str], ...], after_law: bool) -> bool:
    """The name's words in a row in the question, each sharing a reading (after «закон», for a law's title)."""
    n = len(name)
    for i in range(len(question) - n + 1):
        if all(q & w for q, w in zip(question[i:i + n], name, strict=True)) and (
                not after_law or (i > 0 and LAW in question[i - 1])):
            return True
    return False


def _named(question: str, asked: tuple[frozenset[str], ...], label: str) -> bool:
    if not label:
        return False
    if " " not in label:
        for abbreviation in (label, *CODE_ABBREVIATIONS.get(label, ())):
            flags = 0 if len(abbreviation) <= SHORT_ABBREVIATION else re.I
            declined = f"{CASE_ENDING}?" if abbreviation[-1].isupper() else ""
            if re.search(rf"(?<![\w-]){re.escape(abbreviation)}{declined}(?![\w-])", question, flags):
                return True
    return any(_holds(asked, name, after_law) for name, after_law in _names(label))


def named_labels(question: str, labels: Iterable[str]) -> set[str]:
    """The labels («КУ», «Закон «Про відпустки»») whose acts the question names; the question is read once."""
    asked = _words(question)
    return {label for label in labels if _named(question, asked, label.strip())}
