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
from typing import Any, Protocol

from pipeline.contracts import Hit, RawHits, RetrievalTrace, SearchPlan, TraceStep

RRF_K = 60  # the usual constant; notes/retrieval-baselines.md measured RRF(k=60) as the best fusion here
# Channel weights in the fusion. BM25 over lemmas is the stronger signal on legal text; the dense signal adds
# recall for questions in everyday words (measured: README "Retrieval quality").
LEXICAL_WEIGHT = 1.0
DENSE_WEIGHT = 0.6
# Act likelihood: the acts that gather most of the fused mass over both signals' pools are the question's likely
# acts; their articles get a bonus (in units of a first-rank RRF contribution) proportional to that act's share.
# It separates near-identical provisions of neighbouring acts (ЦК / ЦПК / ГПК) the way a lawyer would: by the act
# the whole question points at, not by one article's wording.
ACT_PRIOR_WEIGHT = 0.0
CHUNKS_PER_ARTICLE = 3  # matched chunks kept as evidence per article
POOL_FACTOR = 4  # each signal returns this many times the step's limit before fusion
EXACT_SCORE = 1.0  # an article the user named outranks anything similarity finds


class SearchPort(Protocol):
    @property
    def embed_model(self) -> str: ...

    def dense(self, query: str, act_nregs: list[str], limit: int) -> list[tuple[dict[str, Any], float]]: ...

    def lexical(self, query: str, act_nregs: list[str], limit: int) -> list[tuple[dict[str, Any], float]]: ...

    def article(self, act_nregs: list[str], article: str) -> list[dict[str, Any]]: ...


def _hit(payload: dict[str, Any], score: float, channel: str, step: int) -> Hit:
    return Hit(chunk_key=payload["chunk_key"], act_nreg=payload["act_nreg"], act_title=payload["act_title"],
               act_label=payload.get("act_label") or payload["article_ref"].rsplit(" ст. ", 1)[0],
               article=payload["article"], article_ref=payload["article_ref"], heading=payload.get("heading"),
               r2_key=payload["r2_key"], ordinal=int(payload.get("ordinal", 0)), score=score, channel=channel,
               step=step)


def article_key(payload: dict[str, Any]) -> str:
    return f"{str(payload['act_nreg']).lower()}#{payload['article']}"


def fuse(dense: list[tuple[dict[str, Any], float]], lexical: list[tuple[dict[str, Any], float]], limit: int,
         *, dense_weight: float = DENSE_WEIGHT, lexical_weight: float = LEXICAL_WEIGHT,
         act_prior_weight: float = ACT_PRIOR_WEIGHT) -> list[tuple[list[dict[str, Any]], float, str]]:
    """Articles by weighted RRF, each with its matched chunks (best first) and the channels that found it."""
    scores: dict[str, float] = {}
    chunks: dict[str, dict[str, dict[str, Any]]] = {}
    channels: dict[str, list[str]] = {}
    for name, ranked, weight in (("dense", dense, dense_weight), ("lexical", lexical, lexical_weight)):
        rank = 0
        seen: set[str] = set()
        for payload, _ in ranked:
            key = article_key(payload)
            chunks.setdefault(key, {}).setdefault(payload["chunk_key"], payload)
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + weight / (RRF_K + rank + 1)
            channels.setdefault(key, []).append(name)
            rank += 1
    if act_prior_weight and scores:
        mass: dict[str, float] = {}
        for key, score in scores.items():
            mass[key.split("#", 1)[0]] = mass.get(key.split("#", 1)[0], 0.0) + score
        total = sum(mass.values())
        bonus = act_prior_weight / (RRF_K + 1)
        scores = {k: v + bonus * mass[k.split("#", 1)[0]] / total for k, v in scores.items()}
    order = sorted(scores, key=lambda k: scores[k], reverse=True)[:limit]
    return [(list(chunks[k].values())[:CHUNKS_PER_ARTICLE], scores[k], "+".join(channels[k])) for k in order]


def retrieve(plan: SearchPlan, port: SearchPort, *, attempt: int, seeded: bool = False
             ) -> tuple[RawHits, RetrievalTrace]:
    best: dict[str, Hit] = {}
    trace: list[TraceStep] = []
    for i, step in enumerate(plan.steps):
        started = time.perf_counter()
        error = None
        found: list[Hit] = []
        try:
            if step.kind == "exact_article" and step.article:
                found = [_hit(p, EXACT_SCORE, "exact", i) for p in port.article(step.act_filter, step.article)]
            else:
                pool = max(step.limit * POOL_FACTOR, 40)
                fused = fuse(port.dense(step.query, step.act_filter, pool),
                             port.lexical(step.query, step.act_filter, pool), step.limit,
                             dense_weight=DENSE_WEIGHT, lexical_weight=LEXICAL_WEIGHT,
                             act_prior_weight=ACT_PRIOR_WEIGHT)
                found = [_hit(p, s, ch, i) for ps, s, ch in fused for p in ps]
        except Exception as exc:  # a failed step is traced, not fatal: U5 sees the thin evidence, U6 may retry
            error = f"{type(exc).__name__}: {exc}"[:300]
        for h in found:
            if h.chunk_key not in best or h.score > best[h.chunk_key].score:
                best[h.chunk_key] = h
        trace.append(TraceStep(step=i, kind=step.kind, query=step.query, act_filter=step.act_filter,
                               n_hits=len(found), latency_ms=round((time.perf_counter() - started) * 1000, 2),
                               error=error))
    hits = sorted(best.values(), key=lambda h: h.score, reverse=True)
    return RawHits(hits=hits), RetrievalTrace(attempt=attempt, embed_model=port.embed_model, steps=trace,
                                              seeded=seeded)
