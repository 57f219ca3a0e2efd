"""Budget settings (assemble/budgets.py): profiles, per-mode shares, signal weights and per-layer shares merge over
the built-ins, and a setting that cannot work is refused with its name."""

from __future__ import annotations

from typing import Any

import pytest

from assemble.budgets import AssembleConfig, BudgetConfigError, budget_for, layer_budgets


def test_overrides_merge_over_the_built_in_values() -> None:
    cfg = AssembleConfig.from_overrides(profile_tokens={"compact": 3000}, mode_shares={"law": {"law": 0.7}},
                                        signal_weights={"score": 0.9}, layer_shares={"role": 0.02})
    assert cfg.profile_tokens == {"compact": 3000, "standard": 8000, "extended": 16000}
    assert dict(cfg.mode_shares["law"]) == {"law": 0.7, "memory": 0.05, "doc": 0.0, "history": 0.15}
    assert cfg.signal_weights["score"] == 0.9 and cfg.signal_weights["prior"] == 0.4
    assert budget_for("compact", "law", cfg).law == 2100


@pytest.mark.parametrize("kwargs, setting", [
    ({"profile_tokens": {"compact": 0}}, "U9_PROFILE_TOKENS['compact']"),
    ({"mode_shares": {"law": {"law": 0.95}}}, "U9_MODE_SHARES['law'] shares add up to 1.15"),
    ({"mode_shares": {"law": {"web": 0.1}}}, "unknown channels ['web']"),
    ({"signal_weights": {"luck": 1}}, "U9_SIGNAL_WEIGHTS has unknown signals ['luck']"),
    ({"signal_weights": {"score": -1}}, "U9_SIGNAL_WEIGHTS['score']"),
    ({"layer_shares": {"soul": 0.1}}, "PROMPT_LAYER_SHARES has layers that take no budget ['soul']"),
    ({"layer_shares": {"role": 2}}, "PROMPT_LAYER_SHARES['role']"),
])
def test_a_setting_that_cannot_work_is_refused_with_its_name(kwargs: dict[str, Any], setting: str) -> None:
    with pytest.raises(BudgetConfigError) as caught:
        AssembleConfig.from_overrides(**kwargs)
    assert setting in str(caught.value)


def test_a_new_mode_can_be_configured_and_unknown_modes_fall_back_to_law() -> None:
    cfg = AssembleConfig.from_overrides(mode_shares={"tax": {"law": 0.6, "doc": 0.4}})
    assert budget_for("standard", "tax", cfg).doc == 3200
    assert budget_for("standard", "nope", cfg).law == 6400


def test_layer_budgets_give_kb_the_evidence_caps_and_the_others_their_shares() -> None:
    budget = budget_for("standard", "law")
    out = layer_budgets(budget.total_tokens, budget.evidence_tokens)
    assert out["kb"] == 6400 + 400 + 0 + 1200
    # response_contract is the never-truncated runtime tail (seed 004): it takes no share and has no budget
    assert out == {"directives": 800, "skill": 800, "role": 400, "correction": 800, "kb": 8000}
