"""One adapter per stage: read the sections it needs from the document, call the pure stage with its ports,
return the sections it writes. No ORM here; the shell loads, persists and dispatches."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from assemble.u9 import assemble_prompt, build_blocks
from knowledge.snippets import SnippetStore
from llm.gateway import LlmGateway
from llm.types import Completion, Message
from pipeline import contracts as c
from pipeline.document import read
from pipeline.lexicon import ActLexicon
from pipeline.stages.deliver import deliver
from pipeline.stages.evidence import assemble_evidence
from pipeline.stages.intake import intake
from pipeline.stages.planning import plan_search
from pipeline.stages.profiling import profile_query
from pipeline.stages.reasoning import reason
from pipeline.stages.retrieval import SearchPort, retrieve
from pipeline.stages.verify import verify
from pipeline.stages.writing import write
from recovery.gate import GatePolicy, gate
from recovery.recover import recover


class StageInputMissing(Exception):
    """A stage ran without the section it reads: a wiring bug or a corrupt document; the run fails clearly."""


@dataclass(frozen=True)
class StageConfig:
    question_max_chars: int
    top_k: int
    min_hits: int
    evidence_max_items: int
    budget_profile: str
    u6_retry_max: int
    writer_model: str
    writer_max_tokens: int
    provider: str


@dataclass
class StageEnv:
    run_id: str
    attempt: int
    question: str
    specialist: c.SpecialistProfile
    flags: Mapping[str, bool]
    now: datetime
    config: StageConfig
    lexicon: Callable[[], ActLexicon]
    search: Callable[[], SearchPort]
    snippets: Callable[[], SnippetStore]
    count_tokens: Callable[[str], int]
    tokenizer_id: str
    gateway: Callable[[], LlmGateway]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StageResult:
    write: dict[str, BaseModel | None]
    detail: dict[str, Any] = field(default_factory=dict)


def need(doc: Mapping[str, Any], name: str, kind: type[Any]) -> Any:
    section = read(doc, name, kind)
    if section is None:
        raise StageInputMissing(f"section {name!r} is missing, masked or corrupt")
    return section


def _labels(env: StageEnv, doc: Mapping[str, Any]) -> dict[str, str]:
    labels = {label: e.nreg for label, e in env.lexicon().label_index().items()}
    hits = read(doc, "raw_hits", c.RawHits)
    for h in hits.hits if hits else []:
        labels.setdefault(h.act_label, h.act_nreg)
    return labels


def run_u1(doc: Mapping[str, Any], env: StageEnv) -> StageResult:
    section = intake(question=env.question, specialist=env.specialist,
                     max_chars=env.config.question_max_chars, now=env.now)
    return StageResult({"intake": section}, {"flags": dict(env.flags)})


def run_u2(doc: Mapping[str, Any], env: StageEnv) -> StageResult:
    profile = profile_query(need(doc, "intake", c.Intake), env.lexicon())
    return StageResult({"query_profile": profile},
                       {"acts": [a.nreg for a in profile.act_hints], "refs": [r.article for r in profile.article_refs]})


def run_u3(doc: Mapping[str, Any], env: StageEnv) -> StageResult:
    intake_ = need(doc, "intake", c.Intake)
    plan = plan_search(question=intake_.normalized, profile=need(doc, "query_profile", c.QueryProfile),
                       top_k=env.config.top_k)
    return StageResult({"search_plan": plan}, {"steps": len(plan.steps)})


def run_u4(doc: Mapping[str, Any], env: StageEnv) -> StageResult:
    plan: c.SearchPlan = need(doc, "search_plan", c.SearchPlan)
    retry = read(doc, "retrieval_retry_request", c.RetrievalRetryRequest)
    write_: dict[str, BaseModel | None] = {}
    seeded = retry is not None and retry.state == "pending"
    if seeded and retry is not None:
        # Seeded rerun: the plan's own steps are already in the previous trace and hits; run only the new
        # seeded steps and merge, so nothing is paid twice for the same attempt.
        intake_ = need(doc, "intake", c.Intake)
        profile = need(doc, "query_profile", c.QueryProfile)
        base = plan_search(question=intake_.normalized, profile=profile, top_k=env.config.top_k)
        extra = plan_search(question=intake_.normalized, profile=profile, top_k=env.config.top_k,
                            extra_queries=tuple(retry.seeded_queries), extra_acts=tuple(retry.act_hints))
        plan = c.SearchPlan(steps=extra.steps[len(base.steps):] or base.steps, channels=plan.channels,
                            docs_probe=plan.docs_probe)
        write_["retrieval_retry_request"] = retry.model_copy(update={"state": "applied",
                                                                     "updated_at": env.now.isoformat()})
    hits, trace = retrieve(plan, env.search(), attempt=env.attempt, seeded=seeded)
    if seeded:
        previous = read(doc, "raw_hits", c.RawHits)
        merged = {h.chunk_key: h for h in (previous.hits if previous else [])}
        for h in hits.hits:
            if h.chunk_key not in merged or h.score > merged[h.chunk_key].score:
                merged[h.chunk_key] = h
        hits = c.RawHits(hits=sorted(merged.values(), key=lambda h: h.score, reverse=True))
        prev_trace = read(doc, "retrieval_trace", c.RetrievalTrace)
        if prev_trace is not None:
            trace = trace.model_copy(update={"steps": [*prev_trace.steps, *trace.steps]})
    write_.update({"raw_hits": hits, "retrieval_trace": trace})
    return StageResult(write_, {"hits": len(hits.hits), "seeded": seeded,
                                "errors": [s.error for s in trace.steps if s.error]})


def run_u5(doc: Mapping[str, Any], env: StageEnv) -> StageResult:
    decision = gate(need(doc, "query_profile", c.QueryProfile), need(doc, "raw_hits", c.RawHits),
                    read(doc, "retrieval_trace", c.RetrievalTrace), GatePolicy(min_hits=env.config.min_hits))
    return StageResult({"gate_decision": decision}, {"expand": decision.expand, "reason": decision.reason})


def run_u6(doc: Mapping[str, Any], env: StageEnv) -> StageResult:
    outcome = recover(gate_decision=read(doc, "gate_decision", c.GateDecision),
                      profile=need(doc, "query_profile", c.QueryProfile),
                      previous=read(doc, "retrieval_retry_request", c.RetrievalRetryRequest),
                      retry_max=env.config.u6_retry_max, now=env.now)
    write_: dict[str, BaseModel | None] = {"doclist_trace": outcome.doclist_trace}
    if outcome.retrieval_retry_request is not None:
        write_["retrieval_retry_request"] = outcome.retrieval_retry_request
    if outcome.coverage_gap is not None:
        write_["coverage_gap"] = outcome.coverage_gap
    return StageResult(write_, {"note": outcome.note})


def _coverage_gap(doc: Mapping[str, Any]) -> c.CoverageGap | None:
    return read(doc, "coverage_gap", c.CoverageGap)


def run_u7(doc: Mapping[str, Any], env: StageEnv) -> StageResult:
    gate_ = read(doc, "gate_decision", c.GateDecision)
    retry = read(doc, "retrieval_retry_request", c.RetrievalRetryRequest)
    support: c.SupportLevel = gate_.support_level if gate_ else "weak"
    if retry is not None and retry.state == "exhausted" and support == "strong":
        support = "partial"
    gap = _coverage_gap(doc)
    excluded = frozenset(a["nreg"].lower() for a in (gap.acts if gap else []))
    bound = frozenset(str(a).lower() for a in doc.get("x_bound_acts", []))
    evidence = assemble_evidence(need(doc, "raw_hits", c.RawHits), support_level=support,
                                 max_items=env.config.evidence_max_items, excluded_acts=excluded, bound_acts=bound)
    return StageResult({"evidence_assembly": evidence}, {"items": len(evidence.items)})


def run_u8(doc: Mapping[str, Any], env: StageEnv) -> StageResult:
    result = reason(need(doc, "query_profile", c.QueryProfile), need(doc, "evidence_assembly", c.EvidenceAssembly))
    return StageResult({"legal_reasoning": result}, {"norms": len(result.applicable_norms)})


def run_u9(doc: Mapping[str, Any], env: StageEnv) -> StageResult:
    evidence: c.EvidenceAssembly = need(doc, "evidence_assembly", c.EvidenceAssembly)
    texts, warnings = env.snippets().get_many([k for i in evidence.items for k in i.r2_keys])
    prompt, _ = assemble_prompt(evidence=evidence, profile=need(doc, "query_profile", c.QueryProfile),
                                plan=need(doc, "search_plan", c.SearchPlan), texts=texts, load_warnings=warnings,
                                budget_profile=env.config.budget_profile, tokenizer_id=env.tokenizer_id,
                                count=env.count_tokens, now=env.now, coverage_gap=_coverage_gap(doc))
    return StageResult({"assembled_prompt": prompt}, {"tokens": prompt.meta["total_tokens_est"],
                                                      "snippets": len(prompt.snippets)})


def run_u10(doc: Mapping[str, Any], env: StageEnv) -> StageResult:
    prompt: c.AssembledPrompt = need(doc, "assembled_prompt", c.AssembledPrompt)
    texts, warnings = env.snippets().get_many([k for s in prompt.snippets for k in s.r2_keys])
    gateway = env.gateway()

    def complete(messages: list[Message]) -> Completion:
        return gateway.complete(role="writer", model=env.config.writer_model, messages=messages,
                                max_tokens=env.config.writer_max_tokens)

    draft, _ = write(profile=env.specialist, blocks=build_blocks(prompt.snippets, texts),
                     question=need(doc, "intake", c.Intake).normalized, coverage_gap=_coverage_gap(doc),
                     complete=complete, labels=_labels(env, doc), provider=env.config.provider,
                     attempt=env.attempt)
    return StageResult({"draft": draft}, {"citations": [x.article_ref for x in draft.citations],
                                          "warnings": warnings})


def run_u11(doc: Mapping[str, Any], env: StageEnv) -> StageResult:
    result = verify(need(doc, "draft", c.Draft), need(doc, "assembled_prompt", c.AssembledPrompt),
                    _labels(env, doc), _coverage_gap(doc))
    return StageResult({"verify_result": result}, {"verdict": result.verdict})


def run_u12(doc: Mapping[str, Any], env: StageEnv) -> StageResult:
    evidence = read(doc, "evidence_assembly", c.EvidenceAssembly)
    answer = deliver(need(doc, "draft", c.Draft), need(doc, "verify_result", c.VerifyResult), _labels(env, doc),
                     evidence.support_level if evidence else "none", _coverage_gap(doc))
    return StageResult({"answer": answer}, {"citations": len(answer.citations)})


RUNNERS: dict[str, Callable[[Mapping[str, Any], StageEnv], StageResult]] = {
    "U1": run_u1, "U2": run_u2, "U3": run_u3, "U4": run_u4, "U5": run_u5, "U6": run_u6,
    "U7": run_u7, "U8": run_u8, "U9": run_u9, "U10": run_u10, "U11": run_u11, "U12": run_u12,
}
