"""One adapter per stage: read the typed sections it needs from the document, call the pure stage with its ports,
return the sections it writes — only those its stage owns or updates (``pipeline.context``). No ORM here; the
shell loads, persists and dispatches."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import wraps
from typing import Any, TypeVar

from django.conf import settings
from pydantic import BaseModel

from assemble.budgets import AssembleConfig, budget_for, layer_budgets
from assemble.config import assemble_config, counter_for_encoding, triage_settings
from assemble.layers import PROMPT_ASSEMBLER_VERSION
from assemble.ports import triage_ask
from assemble.prompt import SourceBlock
from assemble.render import kb_room, layered_prompt, legacy_prompt, writer_prompt_from_context
from assemble.selectors import correction_get_many, correction_list_for_run
from assemble.triage import Triage, triage_deterministic, triage_with_model
from assemble.u9 import assemble_prompt
from engine.channel_ports import ChannelPort
from flags.registry import PROMPT_ASSEMBLER_ENABLED
from knowledge.snippets import SnippetStore
from legaltext.citations import EvidenceFirst
from legaltext.lexicon import ActLexicon
from llm.gateway import LlmGateway
from pipeline import contracts as c
from pipeline.context import RunDocument, sections_written_by
from pipeline.contracts import Resolution
from pipeline.messages import Completion, Message
from pipeline.stages.deliver import deliver
from pipeline.stages.evidence import assemble_evidence, channels_to_probe
from pipeline.stages.intake import intake
from pipeline.stages.planning import plan_retry, plan_search
from pipeline.stages.profiling import profile_query
from pipeline.stages.reasoning import reason
from pipeline.stages.retrieval import SearchPort, retrieve
from pipeline.stages.verify import verify
from pipeline.stages.writing import write
from recovery.gate import NO_RELEVANT_LAW, GatePolicy, gate
from recovery.recover import recover

logger = logging.getLogger(__name__)


class StageInputMissing(Exception):
    """A stage ran without the section it reads: a wiring bug or a corrupt document; the run fails clearly."""


class StageWroteForeignSection(Exception):
    """A stage adapter returned a section its stage does not own (``pipeline.context``): a wiring bug."""


@dataclass(frozen=True)
class StageConfig:
    question_max_chars: int
    top_k: int
    min_hits: int
    evidence_max_items: int
    budget_profile: str
    u6_retry_max: int
    clarify_max_options: int
    writer_model: str
    writer_max_tokens: int
    provider: str
    # candidates per non-law channel: MEMORY_MAX_ITEMS, DOCS_MAX_CHUNKS, HISTORY_MAX_TURNS
    channel_limits: Mapping[str, int] = field(default_factory=lambda: {"memory": 3, "doc": 4, "history": 3})


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
    doclist: Callable[[str], Resolution] | None = None  # None: DOCLIST_ENABLED is off
    channels: Callable[[], ChannelPort] | None = None  # U7's memory / documents / history (engine/channel_ports.py)


@dataclass(frozen=True)
class StageResult:
    write: dict[str, BaseModel | None]
    detail: dict[str, Any] = field(default_factory=dict)


S = TypeVar("S")
Runner = Callable[[RunDocument, StageEnv], StageResult]
StoredRunner = Callable[[Mapping[str, Any] | RunDocument, StageEnv], StageResult]


def need(section: S | None, name: str) -> S:
    """A section the stage cannot run without (``name`` only says which in the error)."""
    if section is None:
        raise StageInputMissing(f"section {name!r} is missing, masked or corrupt")
    return section


def stage_adapter(stage: str) -> Callable[[Runner], StoredRunner]:
    """The adapter as the shell calls it: the stored document in, parsed once; what the stage may read is the
    document with its masked sections hidden; what it writes is checked against what its stage owns."""
    allowed = frozenset(sections_written_by(stage))

    def wrap(fn: Runner) -> StoredRunner:
        @wraps(fn)
        def run(doc: Mapping[str, Any] | RunDocument, env: StageEnv) -> StageResult:
            ctx = doc if isinstance(doc, RunDocument) else RunDocument.parse(doc)
            result = fn(ctx.visible(), env)
            foreign = sorted(set(result.write) - allowed)
            if foreign:
                raise StageWroteForeignSection(f"{stage} wrote {foreign}; it may write {sorted(allowed)}")
            return result
        return run
    return wrap


def _labels(env: StageEnv, ctx: RunDocument) -> EvidenceFirst:
    """Label → nreg for citation binding. The evidence's acts bind first: a label shared by two catalog acts
    means the one whose articles the writer was given."""
    first: dict[str, str] = {}
    hits = ctx.raw_hits
    for h in hits.hits if hits else []:
        first.setdefault(h.act_label, h.act_nreg)
    return EvidenceFirst(first, env.lexicon().label_nregs())


@stage_adapter("U1")
def run_u1(ctx: RunDocument, env: StageEnv) -> StageResult:
    section = intake(question=env.question, specialist=env.specialist,
                     max_chars=env.config.question_max_chars, now=env.now)
    return StageResult({"intake": section}, {"flags": dict(env.flags)})


@stage_adapter("U2")
def run_u2(ctx: RunDocument, env: StageEnv) -> StageResult:
    profile = profile_query(need(ctx.intake, "intake"), env.lexicon())
    return StageResult({"query_profile": profile},
                       {"acts": [a.nreg for a in profile.act_hints], "refs": [r.article for r in profile.article_refs]})


@stage_adapter("U3")
def run_u3(ctx: RunDocument, env: StageEnv) -> StageResult:
    intake_ = need(ctx.intake, "intake")
    previous = env.channels().previous_question() if env.channels else None
    plan = plan_search(question=intake_.normalized, profile=need(ctx.query_profile, "query_profile"),
                       top_k=env.config.top_k, previous_question=previous)
    return StageResult({"search_plan": plan}, {"steps": len(plan.steps), "follow_up": bool(previous)})


@stage_adapter("U4")
def run_u4(ctx: RunDocument, env: StageEnv) -> StageResult:
    plan = need(ctx.search_plan, "search_plan")
    retry = ctx.retrieval_retry_request
    write_: dict[str, BaseModel | None] = {}
    seeded = retry is not None and retry.state == "pending"
    if seeded and retry is not None:
        # Seeded rerun: what the earlier passes searched is in their trace and hits; run only the searches the
        # resolved acts and seeded queries add, and merge, so nothing is paid twice.
        intake_ = need(ctx.intake, "intake")
        done = ctx.retrieval_trace
        steps = plan_retry(question=intake_.normalized, profile=need(ctx.query_profile, "query_profile"),
                           top_k=env.config.top_k, retry=retry, done=done.steps if done else [])
        plan = c.SearchPlan(steps=steps, channels=plan.channels, docs_probe=plan.docs_probe)
        write_["retrieval_retry_request"] = retry.model_copy(update={"state": "applied",
                                                                     "updated_at": env.now.isoformat()})
    hits, trace = retrieve(plan, env.search(), attempt=env.attempt, seeded=seeded)
    if seeded:
        prev_trace = ctx.retrieval_trace
        offset = len(prev_trace.steps) if prev_trace else 0  # the merged trace numbers its steps on
        previous = ctx.raw_hits
        merged = {h.chunk_key: h for h in (previous.hits if previous else [])}
        for h in hits.hits:
            if h.chunk_key not in merged or h.score > merged[h.chunk_key].score:
                merged[h.chunk_key] = h.model_copy(update={"step": h.step + offset})
        hits = c.RawHits(hits=sorted(merged.values(), key=lambda h: h.score, reverse=True))
        steps_ = [s.model_copy(update={"step": s.step + offset}) for s in trace.steps]
        trace = trace.model_copy(update={"steps": [*(prev_trace.steps if prev_trace else []), *steps_]})
    write_.update({"raw_hits": hits, "retrieval_trace": trace})
    return StageResult(write_, {"hits": len(hits.hits), "seeded": seeded,
                                "searches": [[s.kind, s.query, s.act_filter] for s in plan.steps],
                                "errors": [s.error for s in trace.steps if s.error]})


@stage_adapter("U5")
def run_u5(ctx: RunDocument, env: StageEnv) -> StageResult:
    decision = gate(need(ctx.query_profile, "query_profile"), need(ctx.raw_hits, "raw_hits"),
                    ctx.retrieval_trace, GatePolicy(min_hits=env.config.min_hits))
    return StageResult({"gate_decision": decision}, {"expand": decision.expand, "reason": decision.reason})


@stage_adapter("U6")
def run_u6(ctx: RunDocument, env: StageEnv) -> StageResult:
    profile = need(ctx.query_profile, "query_profile")
    resolutions = [env.doclist(p) for p in profile.unresolved_act_phrases] if env.doclist else []
    outcome = recover(gate_decision=ctx.gate_decision, profile=profile, previous=ctx.retrieval_retry_request,
                      resolutions=resolutions, clarification=ctx.clarification,
                      retry_max=env.config.u6_retry_max, max_options=env.config.clarify_max_options, now=env.now)
    write_: dict[str, BaseModel | None] = {"doclist_trace": outcome.doclist_trace}
    if outcome.retrieval_retry_request is not None:
        write_["retrieval_retry_request"] = outcome.retrieval_retry_request
    if outcome.coverage_gap is not None:
        write_["coverage_gap"] = outcome.coverage_gap
    if outcome.clarification is not None:
        write_["clarification"] = outcome.clarification
    return StageResult(write_, {"note": outcome.note, "doclist": [r.reason for r in resolutions]})


@stage_adapter("U7")
def run_u7(ctx: RunDocument, env: StageEnv) -> StageResult:
    gate_, retry = ctx.gate_decision, ctx.retrieval_retry_request
    support: c.SupportLevel = gate_.support_level if gate_ else "weak"
    if retry is not None and retry.state == "exhausted" and support == "strong":
        support = "partial"
    excluded = frozenset(a.nreg.lower() for a in (ctx.coverage_gap.acts if ctx.coverage_gap else []))
    chosen = ctx.clarification.answer_nreg if ctx.clarification else None
    bound = frozenset({chosen.lower()}) if chosen else frozenset()
    profile = need(ctx.query_profile, "query_profile")
    found, channel_detail = _channel_hits(ctx, env, profile)
    # a question beyond the law quotes no article as if it answered it (a document may still speak to it)
    law_hits = c.RawHits() if gate_ and gate_.reason == NO_RELEVANT_LAW else need(ctx.raw_hits, "raw_hits")
    evidence = assemble_evidence(law_hits, support_level=support,
                                 max_items=env.config.evidence_max_items, excluded_acts=excluded, bound_acts=bound,
                                 channel_hits=found, mode=profile.mode)
    sources: dict[str, int] = {}
    for item in evidence.items:
        sources[item.source] = sources.get(item.source, 0) + 1
    return StageResult({"evidence_assembly": evidence}, {"items": len(evidence.items), "sources": sources,
                                                         **channel_detail})


def _channel_hits(ctx: RunDocument, env: StageEnv, profile: c.QueryProfile
                  ) -> tuple[list[c.ChannelHit], dict[str, Any]]:
    """Ask the channels the plan calls for. A failing channel (the docs index down) costs its evidence and a line
    in the stage event, never the run: the law answer stands without it."""
    if env.channels is None:
        return [], {}
    port = env.channels()
    plan = ctx.search_plan or c.SearchPlan(steps=[], channels=[], docs_probe=False)
    intake_ = need(ctx.intake, "intake")
    wanted = channels_to_probe(profile, plan, has_user=bool(port.scope.user_ref),
                               has_conversation=bool(port.scope.conversation_id))
    limits = env.config.channel_limits
    calls: dict[str, Callable[[], list[c.ChannelHit]]] = {
        "doc": lambda: port.docs(intake_.normalized, limits["doc"]),
        "memory": lambda: port.memory(intake_.normalized, limits["memory"]),
        "history": lambda: port.history(limits["history"]),
    }
    found: list[c.ChannelHit] = []
    errors: list[str] = []
    for channel in wanted:
        try:
            found.extend(calls[channel]())
        except Exception as exc:
            logger.warning("evidence channel failed", extra={"channel": channel, "error": str(exc)[:300]})
            errors.append(f"{channel}: {type(exc).__name__}: {exc}"[:300])
    detail: dict[str, Any] = {"probed": list(wanted)}
    if errors:
        detail["channel_errors"] = errors
    return found, detail


@stage_adapter("U8")
def run_u8(ctx: RunDocument, env: StageEnv) -> StageResult:
    result = reason(need(ctx.query_profile, "query_profile"), need(ctx.evidence_assembly, "evidence_assembly"))
    return StageResult({"legal_reasoning": result}, {"norms": len(result.applicable_norms)})


def _u9_triage(env: StageEnv, question: str, profile: c.QueryProfile, plan: c.SearchPlan,
               evidence: c.EvidenceAssembly, cfg: AssembleConfig) -> Triage:
    ts = triage_settings()
    if ts.mode == "deterministic":
        return triage_deterministic(profile=profile, plan=plan, evidence=evidence, weights=cfg.signal_weights,
                                    shares=cfg.mode_shares)
    return triage_with_model(question=question, profile=profile, plan=plan, evidence=evidence,
                             weights=cfg.signal_weights, shares=cfg.mode_shares,
                             ask=triage_ask(env.gateway(), ts.model, ts.timeout_s), model=ts.model)


def _u9_layer_budgets(env: StageEnv, mode: str, cfg: AssembleConfig) -> tuple[int, dict[str, int]]:
    budget = budget_for(env.config.budget_profile, mode, cfg)
    return budget.total_tokens, layer_budgets(budget.total_tokens, budget.evidence_tokens, cfg)


def _u9_layered(env: StageEnv, prompt: c.AssembledPrompt, blocks: list[SourceBlock], intake_: c.Intake,
                mode: str, gap: c.CoverageGap | None, cfg: AssembleConfig) -> c.AssembledPrompt:
    total, budgets = _u9_layer_budgets(env, mode, cfg)
    corrections = correction_list_for_run(run_id=env.run_id, limit=settings.PROMPT_CORRECTIONS_MAX)
    # PromptBudgetExceeded propagates: the run fails with its counts rather than send an over-budget prompt.
    wp = layered_prompt(profile=intake_.specialist, blocks=blocks, question=intake_.normalized, coverage_gap=gap,
                        corrections=corrections, total_tokens=total, budgets=budgets,
                        count=env.count_tokens, block_tokens=[s.tokens for s in prompt.snippets])
    kept = set((wp.kept_refs or {}).get("kb", ()))
    dropped = [s.article_ref for s in prompt.snippets if s.article_ref not in kept]
    meta = prompt.meta.model_copy(update={
        "assembler": "layered", "prompt_assembler_version": PROMPT_ASSEMBLER_VERSION,
        "layer_budget": c.LayerBudget(total=total, layers=budgets), "correction_ids": [x.id for x in corrections],
        "total_tokens_est": wp.context_tokens, "prompt_tokens": wp.total_tokens, "prompt_sha256": wp.sha256,
        **({"warnings": [*prompt.meta.warnings, *(f"kb_layer_truncated:{ref}" for ref in dropped)]}
           if dropped else {})})
    # U11 checks citations against what the writer saw: a source the kb layer cut is not evidence any more.
    refs = [r for r in prompt.law_source_refs if r.article_ref in kept]
    return prompt.model_copy(update={"meta": meta, "law_source_refs": refs, "layer_manifest": wp.layer_manifest})


@stage_adapter("U9")
def run_u9(ctx: RunDocument, env: StageEnv) -> StageResult:
    evidence = need(ctx.evidence_assembly, "evidence_assembly")
    profile = need(ctx.query_profile, "query_profile")
    plan = need(ctx.search_plan, "search_plan")
    intake_ = need(ctx.intake, "intake")
    cfg = assemble_config()
    texts, warnings = env.snippets().get_many([k for i in evidence.items for k in i.r2_keys])
    triage = _u9_triage(env, intake_.normalized, profile, plan, evidence, cfg)
    gap = ctx.coverage_gap
    layered = env.flags.get(PROMPT_ASSEMBLER_ENABLED, False)
    sizing = cfg
    if layered:  # the evidence is sized to what the kb layer can hold beside the layers that outrank it
        total, budgets = _u9_layer_budgets(env, profile.mode, cfg)
        room = kb_room(profile=intake_.specialist, coverage_gap=gap, total_tokens=total, budgets=budgets,
                       count=env.count_tokens, sources=len(evidence.items))
        sizing = replace(cfg, profile_tokens={**cfg.profile_tokens, env.config.budget_profile: max(room, 1)})
    prompt, blocks = assemble_prompt(evidence=evidence, profile=profile, plan=plan, texts=texts,
                                     load_warnings=warnings, budget_profile=env.config.budget_profile,
                                     tokenizer_id=env.tokenizer_id, count=env.count_tokens, now=env.now,
                                     coverage_gap=gap, triage=triage, config=sizing)
    if layered:
        prompt = _u9_layered(env, prompt, blocks, intake_, profile.mode, gap, cfg)
    else:
        legacy = legacy_prompt(profile=intake_.specialist, blocks=blocks, question=intake_.normalized,
                               coverage_gap=gap, count=env.count_tokens)
        meta = prompt.meta.model_copy(update={"prompt_tokens": legacy.total_tokens, "prompt_sha256": legacy.sha256})
        prompt = prompt.model_copy(update={"meta": meta})
    return StageResult({"assembled_prompt": prompt}, {
        "tokens": prompt.meta.total_tokens_est, "prompt_tokens": prompt.meta.prompt_tokens,
        "snippets": len(prompt.snippets), "assembler": prompt.meta.assembler, "triage": triage.model,
        "channels": prompt.meta.channels_used})


@stage_adapter("U10")
def run_u10(ctx: RunDocument, env: StageEnv) -> StageResult:
    prompt = need(ctx.assembled_prompt, "assembled_prompt")
    texts, warnings = env.snippets().get_many([k for s in prompt.snippets for k in s.r2_keys])
    layered = prompt.meta.assembler == "layered"
    corrections = correction_get_many(ids=prompt.meta.correction_ids) if layered else []
    # Count with the tokenizer U9 recorded: the layered cut depends on the counts, and must come out the same.
    count = counter_for_encoding(prompt.meta.tokenizer or env.tokenizer_id)
    wp = writer_prompt_from_context(ctx, texts=texts, corrections=corrections, count=count)
    gateway = env.gateway()

    def complete(messages: list[Message]) -> Completion:
        return gateway.complete(role="writer", model=env.config.writer_model, messages=messages,
                                max_tokens=env.config.writer_max_tokens)

    draft = write(messages=wp.messages, complete=complete, labels=_labels(env, ctx), provider=env.config.provider,
                  attempt=env.attempt)
    detail: dict[str, Any] = {"citations": [x.article_ref for x in draft.citations], "warnings": warnings,
                              "assembler": wp.assembler, "prompt_sha256": wp.sha256,
                              "prompt_tokens": wp.total_tokens,
                              "prompt_matches_u9": wp.sha256 == prompt.meta.prompt_sha256}
    if layered:
        detail["prompt_assembler_version"] = prompt.meta.prompt_assembler_version
    return StageResult({"draft": draft}, detail)


def _titles(env: StageEnv) -> Mapping[str, str]:
    """Catalog titles → nreg: acts with neither an abbreviation nor a «Про …» title are still recognised."""
    return env.lexicon().title_nregs()


@stage_adapter("U11")
def run_u11(ctx: RunDocument, env: StageEnv) -> StageResult:
    prompt = need(ctx.assembled_prompt, "assembled_prompt")
    texts, _ = env.snippets().get_many([k for s in prompt.snippets for k in s.r2_keys if s.source != "history"])

    def of(*sources: str) -> list[str]:
        return [texts[k] for s in prompt.snippets if s.source in sources for k in s.r2_keys if k in texts]

    # History turns are our own earlier answers (their forged blocks are escaped where rendered): a new answer
    # that repeats the writer's words from them is not a user's text posing as law.
    result = verify(need(ctx.draft, "draft"), prompt, _labels(env, ctx), ctx.coverage_gap,
                    titles=_titles(env), user_texts=of("doc", "memory"), law_texts=of("lldbi"))
    return StageResult({"verify_result": result}, {"verdict": result.verdict})


@stage_adapter("U12")
def run_u12(ctx: RunDocument, env: StageEnv) -> StageResult:
    evidence = ctx.evidence_assembly
    answer = deliver(need(ctx.draft, "draft"), need(ctx.verify_result, "verify_result"), _labels(env, ctx),
                     evidence.support_level if evidence else "none", ctx.coverage_gap, titles=_titles(env))
    return StageResult({"answer": answer}, {"citations": len(answer.citations)})


RUNNERS: dict[str, StoredRunner] = {
    "U1": run_u1, "U2": run_u2, "U3": run_u3, "U4": run_u4, "U5": run_u5, "U6": run_u6,
    "U7": run_u7, "U8": run_u8, "U9": run_u9, "U10": run_u10, "U11": run_u11, "U12": run_u12,
}
