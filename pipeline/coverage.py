"""Coverage-gap honesty (seeds 001/002): the sentence an answer owes for each act it could not consult, and whether a
draft already says it. Pure; shared by U11 (a draft that leaves a declared gap out goes back to the writer), U12
(which appends the sentence when the write retries are spent) and the offline writer."""

from __future__ import annotations

from collections.abc import Iterable

from legaltext.text import lemma, normalize, words
from pipeline.contracts import ACT_NOT_CHECKED_DOCLIST_UNAVAILABLE, ACT_NOT_FOUND_IN_CATALOG, CoverageGap, GapAct

# Words a mention of an act may leave out ("Податкового кодексу" names «Податковий кодекс України»).
_OPTIONAL = frozenset({"україна", "про", "щодо", "для", "від", "закон"})


def _name_lemmas(text: str) -> set[str]:
    return {lemma(w) for w in words(text) if len(w) > 2} - _OPTIONAL


def act_name(act: GapAct) -> str:
    return act.name


def gap_sentence(reason: str, names: Iterable[str]) -> str:
    joined = "; ".join(n for n in names if n)
    if reason == ACT_NOT_FOUND_IN_CATALOG:
        # the catalog knows no act by that name: «закон про подарунки» is more often a subject than a law, so the
        # answer does not say the act exists and is missing, only that no act goes by that name
        return (f"Зверніть увагу: акта з такою назвою ({joined}) у каталозі актів не знайдено, тому я не можу "
                "послатися на його норми.")
    if reason == ACT_NOT_CHECKED_DOCLIST_UNAVAILABLE:
        return (f"Зверніть увагу: не вдалося перевірити, про який акт ідеться ({joined}): каталог актів зараз "
                "недоступний, тому я не можу послатися на його норми.")
    return (f"Зверніть увагу: потрібного акта ({joined}) немає в базі знань, тому я не можу послатися на його "
            "норми.")


NOTE_OPENING = "Зверніть увагу:"  # how every note to the reader opens (the gap's, the weak support's, the writer's)


# What a weakly supported answer owes its reader (seed 002: downstream handles weak support): the gate found the
# evidence far from the question, or the retries ran out, or too little was found — the quotes stand, and so does
# the warning that they may not be the law that governs the case.
WEAK_SUPPORT_NOTE = (f"{NOTE_OPENING} у базі знань не знайшлося норми, яка прямо відповідає на це питання; наведені "
                     "статті стосуються його лише частково. Можливо, його регулює акт, якого в базі немає.")


def act_reason(gap: CoverageGap, act: GapAct) -> str:
    return act.reason or gap.reason


def is_named(text: str, act: GapAct) -> bool:
    """Does the text name the act: its registration number, or every word of its title in any inflection
    ("Податкового кодексу" names «Податковий кодекс України»)."""
    nreg = act.nreg
    if nreg and nreg.lower() in normalize(text).lower():
        return True
    wanted = _name_lemmas(act_name(act))
    return bool(wanted) and wanted <= _name_lemmas(text)


def unnamed_acts(text: str, gap: CoverageGap | None) -> list[GapAct]:
    """The gap's acts the text never names."""
    if gap is None:
        return []
    return [a for a in gap.acts if act_name(a) and not is_named(text, a)]


def gap_sentences(gap: CoverageGap, acts: Iterable[GapAct]) -> list[str]:
    """One sentence per reason, naming the acts of that reason."""
    by_reason: dict[str, list[str]] = {}
    for a in acts:
        by_reason.setdefault(act_reason(gap, a), []).append(act_name(a))
    return [gap_sentence(reason, names) for reason, names in by_reason.items()]
