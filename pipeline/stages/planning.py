"""U3 Planning: which searches to run, with which act filters and channels. Pure."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.contracts import QueryProfile, RetrievalRetryRequest, SearchPlan, SearchStep, TraceStep

# "А для неповнолітніх?" after a question on leave: a short question that names no act, article or term leans on
# the conversation's previous question, so it is searched together with it.
FOLLOW_UP_MAX_WORDS = 8
# The Constitution is the law every act answers to, yet a lay question about a right ranks the special law or code
# that spells the right out: the Constitution's articles have no headings and few of the words people use. So it
# has seats: the question is searched within the Constitution alone too, and its first CONSTITUTION_SEATS articles
# join at CONSTITUTION_SEAT_WEIGHT of their fused score — about the tenth place of the main list, higher only where
# the main search ranks them higher itself. On eval/natural dev: the Constitution's questions with the gold article
# in the first 10 0.37 → 0.61, all questions 0.58 → 0.61; 0.3 changed nothing, 0.7–1 pushed out codes (README).
# A question that names an act has no seats: «Відповідно до Кодексу адміністративного судочинства, у який строк суд
# розглядає заяву про забезпечення позову?» led with Конституція ст. 129 and 153, whose search within 167 articles
# scored above the named code's own. eval/natural exam_dev hit@1 0.800 → 0.813, dev 0.677 → 0.681, the other sets
# unchanged (README "Retrieval quality", session 35).
CONSTITUTION_NREG = "254к/96-ВР"
CONSTITUTION_SEATS = 2
CONSTITUTION_SEAT_WEIGHT = 0.5
# An act whose title words the question uses as its subject ("під час воєнного стану": profiling's topic_acts) was
# a filter at full weight, so «Про правовий режим воєнного стану» filled the evidence of labour and criminal
# questions asked in wartime. It is searched like a seat instead. On eval/natural dev: hit@10 0.673 → 0.677, act in
# the first 5 0.774 → 0.782, hit@1 −1 question (README).
TOPIC_ACT_WEIGHT = 0.5


def is_follow_up(question: str, profile: QueryProfile) -> bool:
    return (len(question.split()) <= FOLLOW_UP_MAX_WORDS and not profile.act_hints and not profile.article_refs
            and not profile.definition_term)


def plan_search(*, question: str, profile: QueryProfile, top_k: int,
                extra_queries: tuple[str, ...] = (), extra_acts: tuple[str, ...] = (),
                previous_question: str | None = None) -> SearchPlan:
    """``previous_question``: the conversation's last question, when the run belongs to one."""
    indexed_acts = [c.nreg for c in profile.act_hints if c.indexed] + [a for a in extra_acts]
    indexed_acts = list(dict.fromkeys(indexed_acts))
    steps: list[SearchStep] = []
    for ref in profile.article_refs:
        acts = [ref.act_nreg] if ref.act_nreg else indexed_acts
        # without an act, the words the question uses for it ("процесуального кодексу") rank the acts U4 fetches
        query = ref.matched if acts else " ".join([ref.matched, *profile.unresolved_act_phrases])
        steps.append(SearchStep(kind="exact_article", query=query, act_filter=acts, article=ref.article,
                                limit=top_k))
    term = profile.definition_term
    # The definition steps lead (the term as some act defines it, then the term searched on its own: "що таке X"
    # about a term no act defines as such); the whole question follows. Adding the words "визначення термінів"
    # to the second step, as before, pulled any definitions article first ("Що таке трудовий договір?" → КПК ст. 3)
    # and measured no better on dev_definitions (0.984 / 0.878 both ways).
    if term:
        steps.append(SearchStep(kind="definition", query=term, act_filter=indexed_acts, limit=top_k))
        steps.append(SearchStep(kind="hybrid", query=term, act_filter=indexed_acts,
                                limit=top_k))
    follow_up = bool(previous_question) and is_follow_up(question, profile)
    if follow_up:  # the question in the context of the previous one leads; the question alone follows
        steps.append(SearchStep(kind="hybrid", query=f"{previous_question} {question}", act_filter=indexed_acts,
                                limit=top_k))
    steps.append(SearchStep(kind="hybrid", query=question, act_filter=indexed_acts,
                            limit=max(top_k // 2, 3) if term or follow_up else top_k))
    if not term and not profile.article_refs and not indexed_acts:
        steps.append(SearchStep(kind="hybrid", query=f"{previous_question} {question}" if follow_up else question,
                                act_filter=[CONSTITUTION_NREG], limit=CONSTITUTION_SEATS,
                                weight=CONSTITUTION_SEAT_WEIGHT))
    topic = [c.nreg for c in profile.topic_acts if c.indexed and c.nreg not in indexed_acts]
    if topic and not term:  # searched alone too, joined at a lower weight: a candidate, not the answer's act
        steps.append(SearchStep(kind="hybrid", query=question, act_filter=topic, limit=max(top_k // 2, 3),
                                weight=TOPIC_ACT_WEIGHT))
    if indexed_acts and not profile.article_refs:
        # A named act narrows the search; a smaller unfiltered pass guards against a wrongly named act.
        steps.append(SearchStep(kind="hybrid", query=question, act_filter=[], limit=max(top_k // 2, 3)))
    for q in extra_queries:
        steps.append(SearchStep(kind="hybrid", query=q, act_filter=indexed_acts, limit=top_k))
    # the record of what U7 may search besides law
    channels = ["lldbi_chunks"] if profile.law_only else ["lldbi_chunks", "docs"]
    if profile.mode in ("mixed", "memory"):
        channels.append("memory")
    # Seed 001: a law-only plan works with legislation chunks only. A follow-up is the exception: "А для
    # неповнолітніх?" means nothing without the previous turn, which the writer needs to answer it.
    if previous_question and (not profile.law_only or follow_up):
        channels.append("history")
    return SearchPlan(steps=steps, channels=channels, docs_probe=not profile.law_only)


def _signature(kind: str, query: str, act_filter: Sequence[str]) -> tuple[str, str, tuple[str, ...]]:
    return kind, query, tuple(a.lower() for a in act_filter)


def plan_retry(*, question: str, profile: QueryProfile, top_k: int, retry: RetrievalRetryRequest,
               done: Sequence[TraceStep]) -> list[SearchStep]:
    """The searches of a seeded U6→U4 rerun (seeds 001/002): the plan as it would be with the acts recovery
    resolved and its seeded queries — the question within those acts, the named articles fetched from them, the
    seeded queries — less every search the previous passes already ran (``done``, their trace): each is paid once.
    A search that failed (a transient Qdrant error) was not paid for: the direct retry runs it again.

    The acts DocList found change the earlier steps too (an article without an act gets one, the question gets a
    filter), so the rerun is not "the steps appended after the plan's own"."""
    full = plan_search(question=question, profile=profile, top_k=top_k, extra_queries=tuple(retry.seeded_queries),
                       extra_acts=tuple(retry.act_hints))
    paid = {_signature(s.kind, s.query, s.act_filter) for s in done if s.error is None}
    steps: list[SearchStep] = []
    for step in full.steps:
        sig = _signature(step.kind, step.query, step.act_filter)
        if sig not in paid:
            paid.add(sig)  # a seeded query equal to another step is one search too
            steps.append(step)
    return steps
