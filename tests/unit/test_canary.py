"""The deterministic canary (orch/canary.py): rules for obvious branches, a model only for hard ones, and a
model's answer outside the allowed actions never changes the decision."""

from __future__ import annotations

import pytest

from orch.canary import difficulty, orch_messages, pick
from orch.policy import Decision
from pipeline.contracts import ActCue, ArticleRefCue, QueryProfile
from pipeline.document import dump

KZPP = ActCue(nreg="322-08", title="Кодекс законів про працю України", label="КЗпП", matched="КЗпП",
              how="abbreviation", indexed=True)
CK = ActCue(nreg="435-15", title="Цивільний кодекс України", label="ЦК", matched="ЦК", how="abbreviation",
            indexed=True)


def profile(acts=(), refs=(), unresolved=(), complexity="simple") -> dict:
    return {"query_profile": dump(QueryProfile(mode="law", law_only=True, act_hints=list(acts),
                                               article_refs=list(refs), goals=["?"], complexity=complexity,
                                               unresolved_act_phrases=list(unresolved)))}


@pytest.mark.parametrize(("doc", "expected"), [
    pytest.param(profile(acts=[KZPP]), "obvious", id="single-act"),
    pytest.param(profile(refs=[ArticleRefCue(article="36", matched="ст. 36")]), "obvious", id="explicit-article"),
    pytest.param(profile(), "moderate", id="no-cues"),
    pytest.param(profile(acts=[KZPP, CK]), "complex", id="two-acts"),
    pytest.param(profile(acts=[KZPP], unresolved=["процесуального кодексу"]), "complex", id="ambiguous-act"),
    pytest.param(profile(complexity="complex"), "complex", id="complex-question"),
])
def test_difficulty_follows_the_seed_examples(doc, expected):
    assert difficulty(doc) == expected


def test_a_model_may_choose_only_among_the_allowed_actions():
    decision = Decision("RUN_U10", "write retry", reset=("draft", "verify_result"), alternatives=("RUN_U12",))

    assert pick(decision, "RUN_U12").action == "RUN_U12"
    assert pick(decision, "RUN_U12").reset == ()  # U12 needs the draft: nothing is reset on that branch
    assert pick(decision, "RUN_U10 please").reset == ("draft", "verify_result")
    assert pick(decision, "FAIL everything").action == "RUN_U10"  # outside the allowed set: the rule stands


def test_the_orch_prompt_lists_the_rule_choice_first():
    decision = Decision("RUN_U7", "gate satisfied", alternatives=("RUN_U6",))
    text = orch_messages(decision, profile())[-1].content
    assert "<orch_options>RUN_U7 | RUN_U6</orch_options>" in text
