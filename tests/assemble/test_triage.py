"""Meta-triage (assemble/triage.py) and its effect on U9: law-first deterministic selection, the docs probe
skipped for law-only questions, a model's ranking through a port, and the fallback on timeout or error."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from assemble.budgets import MODE_SHARES, SIGNAL_WEIGHTS, AssembleConfig
from assemble.ports import triage_ask
from assemble.triage import LAW, triage_deterministic, triage_with_model
from assemble.u9 import assemble_prompt
from llm.tokenizer import count_tokens
from llm.types import Completion, Message
from pipeline.contracts import EvidenceAssembly, EvidenceItem, QueryProfile, SearchPlan

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
LAW_ONLY = QueryProfile(mode="law", law_only=True, complexity="simple")
MIXED = QueryProfile(mode="mixed", law_only=False, complexity="moderate")
MEMORY = QueryProfile(mode="memory", law_only=False, complexity="moderate")
NO_DOCS = SearchPlan(steps=[], channels=[LAW], docs_probe=False)
WITH_DOCS = SearchPlan(steps=[], channels=[LAW, "docs"], docs_probe=True)
TEXT = "Роботодавець зобов'язаний надати працівникові щорічну відпустку. " * 3


def ev(source: str, rank: int, score: float) -> EvidenceItem:
    ref = f"КЗпП ст. {rank}" if source == "lldbi" else None
    return EvidenceItem(source=source, rank=rank, score=score, article_ref=ref,
                        r2_keys=[f"{source}-{rank}"])


EVIDENCE = EvidenceAssembly(items=[ev("lldbi", 1, 0.9), ev("doc", 2, 0.95), ev("memory", 3, 0.4)],
                            support_level="strong")
TEXTS = {f"{i.source}-{i.rank}": TEXT for i in EVIDENCE.items}


def reply(text: str) -> Completion:
    return Completion(text=text, model="m", prompt_tokens=1, completion_tokens=1)


def det(profile: QueryProfile, plan: SearchPlan, evidence: EvidenceAssembly = EVIDENCE,
        weights: dict[str, float] = SIGNAL_WEIGHTS):
    return triage_deterministic(profile=profile, plan=plan, evidence=evidence, weights=weights, shares=MODE_SHARES)


def with_model(ask, profile: QueryProfile = MIXED, plan: SearchPlan = WITH_DOCS):
    return triage_with_model(question="Чи можна поділити відпустку?", profile=profile, plan=plan, evidence=EVIDENCE,
                             weights=SIGNAL_WEIGHTS, shares=MODE_SHARES, ask=ask, model="gpt-4o-mini")


def test_deterministic_triage_puts_law_first_even_when_another_channel_scores_higher() -> None:
    strong_memory = EvidenceAssembly(items=[ev("lldbi", 2, 0.3), ev("memory", 1, 0.95)], support_level="partial")
    result = det(MEMORY, WITH_DOCS, strong_memory)
    assert result.channels == (LAW, "memory")
    assert result.scores["memory"] > result.scores[LAW]
    assert result.model == "deterministic" and result.fallback is None


def test_a_law_only_question_skips_the_docs_probe_decided_at_planning() -> None:
    result = det(LAW_ONLY, NO_DOCS)
    assert "docs" not in result.channels and "docs" in result.skipped
    assert result.channels == (LAW, "memory")


def test_signal_weights_decide_the_order_of_the_non_law_channels() -> None:
    by_score = det(MIXED, WITH_DOCS, weights={"prior": 0, "score": 1, "volume": 0, "explicit": 0})
    by_prior = det(MEMORY, WITH_DOCS, weights={"prior": 1, "score": 0, "volume": 0, "explicit": 0})
    assert by_score.channels == (LAW, "docs", "memory")  # the doc item scored 0.95, memory 0.4
    assert by_prior.channels == (LAW, "memory", "docs")  # memory mode gives memory the larger share


def test_empty_evidence_selects_no_channel() -> None:
    result = det(LAW_ONLY, NO_DOCS, EvidenceAssembly(items=[], support_level="none"))
    assert result.channels == ()


def test_the_model_ranks_the_channels_when_it_answers_well() -> None:
    asked: list[list[Message]] = []

    def ask(messages: list[Message]) -> Completion:
        asked.append(messages)
        return reply('Ось: {"channels": ["docs", "lldbi_chunks"]}')

    result = with_model(ask)
    assert result.channels == ("docs", LAW) and result.model == "gpt-4o-mini"
    assert result.skipped == {"memory": "not chosen by the triage model"}
    assert len(asked) == 1 and '"lldbi_chunks"' in asked[0][1].content


def test_law_evidence_is_never_dropped_by_the_model() -> None:
    result = with_model(lambda m: reply('{"channels": ["memory"]}'))
    assert result.channels == (LAW, "memory")


@pytest.mark.parametrize("ask, why", [
    (lambda m: (_ for _ in ()).throw(TimeoutError("no answer within U9_TRIAGE_TIMEOUT_S=3s")), "TimeoutError"),
    (lambda m: (_ for _ in ()).throw(RuntimeError("provider down")), "RuntimeError"),
    (lambda m: reply("не знаю"), "no JSON object"),
    (lambda m: reply('{"channels": ["web"]}'), "no known channel"),
], ids=["timeout", "provider-error", "not-json", "unknown-channel"])
def test_on_timeout_or_error_triage_falls_back_to_deterministic_law_first(ask, why) -> None:
    result = with_model(ask)
    assert result.channels == det(MIXED, WITH_DOCS).channels and result.channels[0] == LAW
    assert result.model == "deterministic" and result.fallback is not None and why in result.fallback


def test_with_one_candidate_channel_no_model_is_asked() -> None:
    asked: list[object] = []
    only_law = EvidenceAssembly(items=[ev("lldbi", 1, 0.9), ev("doc", 2, 0.95)], support_level="strong")
    result = triage_with_model(question="q", profile=LAW_ONLY, plan=NO_DOCS, evidence=only_law,
                               weights=SIGNAL_WEIGHTS, shares=MODE_SHARES,
                               ask=lambda m: asked.append(m) or reply(""),  # type: ignore[func-returns-value]  # record, then reply
                               model="gpt-4o-mini")
    assert asked == [] and result.channels == (LAW,) and result.model == "deterministic"


class _StuckGateway:
    """Stands in for the LLM gateway of a provider that does not answer until released."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def complete(self, **kwargs: object) -> Completion:
        self.release.wait(timeout=30)
        return reply('{"channels": ["docs"]}')


def test_the_triage_port_gives_up_after_its_timeout() -> None:
    gateway = _StuckGateway()
    ask = triage_ask(gateway, "gpt-4o-mini", timeout_s=0.05)  # type: ignore[arg-type]  # a stub with complete() only
    try:
        with pytest.raises(TimeoutError, match=r"U9_TRIAGE_TIMEOUT_S=0\.05s"):
            ask([Message("user", "q")])
    finally:
        gateway.release.set()


def assemble(profile: QueryProfile, plan: SearchPlan, triage=None, config=None):
    return assemble_prompt(evidence=EVIDENCE, profile=profile, plan=plan, texts=TEXTS, load_warnings=[],
                           budget_profile="standard", tokenizer_id="o200k_base", count=count_tokens, now=NOW,
                           triage=triage, config=config)


def test_u9_leaves_out_documents_for_a_law_only_question_and_says_so() -> None:
    prompt, _ = assemble(LAW_ONLY, NO_DOCS)
    assert "channel_skipped:docs" in prompt.meta.warnings
    assert {s.source for s in prompt.snippets} == {"lldbi", "memory"}
    assert prompt.budget.doc_chars == 0 and prompt.meta.docs_probe is False
    assert prompt.meta.channels_used == [LAW, "memory"]


def test_mixed_evidence_is_packed_per_channel_with_provenance_and_only_law_feeds_law_source_refs() -> None:
    prompt, blocks = assemble(MIXED, WITH_DOCS)
    assert [s.source for s in prompt.snippets] == ["lldbi", "doc", "memory"]  # law first, then by score
    assert prompt.budget.law_chars == prompt.budget.doc_chars == prompt.budget.memory_chars == len(TEXT)
    assert [r.article_ref for r in prompt.law_source_refs] == ["КЗпП ст. 1"]
    assert [b.article_ref for b in blocks] == ["КЗпП ст. 1", "doc:2", "memory:3"]
    assert all(s.r2_key == f"{s.source}-{s.rank}" for s in prompt.snippets)
    assert prompt.meta.triage_model == "deterministic"


def test_a_channel_with_no_share_in_the_mode_holds_nothing() -> None:
    # given a config that gives documents no room in mixed mode
    cfg = AssembleConfig.from_overrides(mode_shares={"mixed": {"doc": 0.0}})
    prompt, _ = assemble(MIXED, WITH_DOCS, config=cfg)
    assert "dropped_over_budget:doc:2" in prompt.meta.warnings
    assert prompt.budget.doc_chars == 0 and prompt.meta.budget_tokens is not None and prompt.meta.budget_tokens.doc == 0


def test_the_model_triage_result_is_recorded_in_meta() -> None:
    triage = with_model(lambda m: reply('{"channels": ["lldbi_chunks", "docs"]}'))
    prompt, _ = assemble(MIXED, WITH_DOCS, triage=triage)
    assert prompt.meta.triage_model == "gpt-4o-mini"
    assert prompt.meta.channels_used == [LAW, "docs"] and "channel_skipped:memory" in prompt.meta.warnings
