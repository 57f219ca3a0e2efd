"""What a stage computes with: its ports and bounds (StageEnv), the run's limits and the stage configuration, read
from settings for each stage. The claimed shell (engine/shell.py) and the held path (engine/held.py) build the same."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.conf import settings

from engine import ports
from engine.channel_ports import ChannelPort, RunScope
from engine.runners import StageConfig, StageEnv
from flags.selectors import flags_snapshot
from llm.gateway import LlmGateway
from llm.tokenizer import count_tokens, encoding_name_for_model
from orch.policy import Limits
from pipeline.contracts import DOCLIST_UNAVAILABLE, Resolution, SpecialistProfile
from runs.models import Run
from runs.selectors import run_spend_caps

logger = logging.getLogger(__name__)


def limits() -> Limits:
    return Limits(max_steps=settings.RUN_MAX_STEPS, u6_retry_max=settings.U6_DIRECT_RETRY_MAX,
                  u11_write_retry_max=settings.U11_DIRECT_WRITE_RETRY_MAX)


def run_limits(run: Run) -> dict[str, object]:
    cap = run.specialist.cost_cap_usd if run.specialist.cost_cap_usd is not None else settings.RUN_COST_CAP_USD
    return {"RUN_MAX_STEPS": settings.RUN_MAX_STEPS, "U6_DIRECT_RETRY_MAX": settings.U6_DIRECT_RETRY_MAX,
            "U11_DIRECT_WRITE_RETRY_MAX": settings.U11_DIRECT_WRITE_RETRY_MAX, "RUN_COST_CAP_USD": str(cap)}


def stage_config() -> StageConfig:
    return StageConfig(question_max_chars=settings.QUESTION_MAX_CHARS, top_k=settings.RETRIEVAL_TOP_K,
                       min_hits=settings.GATE_MIN_HITS, evidence_max_items=settings.EVIDENCE_MAX_ITEMS,
                       budget_profile=settings.U9_BUDGET_PROFILE, u6_retry_max=settings.U6_DIRECT_RETRY_MAX,
                       clarify_max_options=settings.CLARIFY_MAX_OPTIONS,
                       writer_model=settings.LLM_WRITER_MODEL, writer_max_tokens=settings.LLM_WRITER_MAX_TOKENS,
                       provider=settings.LLM_PROVIDER,
                       channel_limits={"memory": settings.MEMORY_MAX_ITEMS, "doc": settings.DOCS_MAX_CHUNKS,
                                       "history": settings.HISTORY_MAX_TURNS})


def _as_dict(candidate: object) -> dict[str, Any]:
    if isinstance(candidate, dict):
        return candidate
    if hasattr(candidate, "model_dump"):
        return dict(candidate.model_dump())
    return dict(vars(candidate))


def doclist_port() -> Callable[[str], Resolution] | None:
    """DocList as U6 sees it: a phrase in, a reason code and candidates out (local or remote client)."""
    if not settings.DOCLIST_ENABLED:
        return None
    from knowledge import doclist_client

    def resolve(query: str) -> Resolution:
        try:
            answer = doclist_client.resolve(query)
        except doclist_client.DoclistUnavailable as exc:  # U6 forwards or retries; it never guesses an act
            logger.warning("DocList unavailable", extra={"error": str(exc)})
            return Resolution(query=query, reason=DOCLIST_UNAVAILABLE)
        return Resolution(query=query, reason=str(answer.reason),
                          candidates=[_as_dict(c) for c in answer.candidates])

    return resolve


def stage_env(run: Run, stage: str, attempt: int, now: datetime, delivery: int = 1,
              gateway: Callable[[], LlmGateway] | None = None) -> StageEnv:
    """The stage's ports. ``delivery``: which delivery of this attempt runs (a model call sent again after a
    redelivery is billed again by the provider, so the ledger records it again). ``gateway``: in place of the
    model gateway (engine/held.py: a stage computed before its claim may not reach a model)."""
    sp = run.specialist
    profile = SpecialistProfile(slug=sp.slug, name=sp.name, soul=sp.soul, role_skeleton=sp.role_skeleton,
                                directives=[str(d) for d in sp.directives or []], red_lines=sp.red_lines,
                                response_contract=sp.response_contract)
    model = settings.LLM_WRITER_MODEL
    search = ports.QdrantSearchPort()
    # Flags are resolved once, at U1, and snapshotted on the run so retries route the same way.
    flags = {**flags_snapshot(specialist=sp), **run.flag_overrides} if stage == "U1" else dict(run.flags)
    return StageEnv(
        run_id=str(run.id), attempt=attempt, question=run.question, specialist=profile, flags=flags, now=now,
        config=stage_config(), lexicon=ports.load_lexicon, search=lambda: search, snippets=ports.snippet_store,
        count_tokens=lambda text: count_tokens(text, model), tokenizer_id=encoding_name_for_model(model),
        gateway=gateway or (lambda: LlmGateway(str(run.id), stage, attempt, caps=run_spend_caps(run=run),
                                               delivery=delivery)),
        doclist=doclist_port() if stage == "U6" else None,
        channels=(lambda: channel_port(run)) if stage in ("U3", "U7") else None,  # U3: the previous question
    )


def channel_port(run: Run) -> ChannelPort:
    scope = RunScope(run_id=str(run.id), org_id=run.org_id, user_ref=run.user_ref,
                     conversation_id=run.conversation_id, created_at=run.created_at)
    return ChannelPort(scope, ports.snippet_store())


def injected_delay(stage: str) -> None:
    delays = settings.ENGINE_FAULT_DELAYS
    delay = delays.get(stage, delays.get("*", 0.0)) if delays else 0.0
    if delay > 0:
        logger.warning("fault injection: stage sleeps", extra={"seconds": delay})
        time.sleep(delay)
