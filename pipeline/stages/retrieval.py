"""U4 Retrieval: run the plan's steps against LLDBI through a search port; fuse dense and BM25 by reciprocal
rank; fetch explicitly named articles directly; keep one best hit per chunk. Pure given the port."""

from __future__ import annotations

import time
from typing import Any, Protocol

from pipeline.contracts import Hit, RawHits, RetrievalTrace, SearchPlan, TraceStep

RRF_K = 60  # the usual constant; notes/retrieval-baselines.md measured RRF(k=60) as the best fusion here
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


def fuse(dense: list[tuple[dict[str, Any], float]], lexical: list[tuple[dict[str, Any], float]],
         limit: int) -> list[tuple[dict[str, Any], float, str]]:
    scores: dict[str, float] = {}
    payloads: dict[str, dict[str, Any]] = {}
    channels: dict[str, list[str]] = {}
    for name, ranked in (("dense", dense), ("lexical", lexical)):
        for rank, (payload, _) in enumerate(ranked):
            key = payload["chunk_key"]
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank + 1)
            payloads[key] = payload
            channels.setdefault(key, []).append(name)
    order = sorted(scores, key=lambda k: scores[k], reverse=True)[:limit]
    return [(payloads[k], scores[k], "+".join(channels[k])) for k in order]


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
                pool = max(step.limit * 3, 30)
                fused = fuse(port.dense(step.query, step.act_filter, pool),
                             port.lexical(step.query, step.act_filter, pool), step.limit)
                found = [_hit(p, s, ch, i) for p, s, ch in fused]
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
