"""U9 budgets (seed 000): token envelopes per profile, per-mode shares across the evidence channels, the
multi-signal weights meta-triage ranks channels with, and the per-layer shares of the layered assembler (seed 004).

The constants are the built-in defaults; ``AssembleConfig.from_overrides`` merges the JSON settings over them
(``U9_PROFILE_TOKENS``, ``U9_MODE_SHARES``, ``U9_SIGNAL_WEIGHTS``, ``PROMPT_LAYER_SHARES``) and refuses nonsense."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

PROFILE_TOKENS = {"compact": 4_000, "standard": 8_000, "extended": 16_000}
CHANNEL_KEYS = ("law", "memory", "doc", "history")

# Share of the envelope per channel, by query mode: law questions give law most of the room, memory-heavy
# ones give it to memory (seed 000 "snippet/char caps per mode").
MODE_SHARES: dict[str, dict[str, float]] = {
    "law": {"law": 0.80, "memory": 0.05, "doc": 0.0, "history": 0.15},
    "mixed": {"law": 0.50, "memory": 0.10, "doc": 0.30, "history": 0.10},
    "memory": {"law": 0.30, "memory": 0.50, "doc": 0.10, "history": 0.10},
}

# Meta-triage signals (seed 000 "multi-signal weights"): the mode's prior for a channel, the best evidence score
# in it, its share of the evidence items, and whether the question named an act or an article (law only).
SIGNAL_WEIGHTS: dict[str, float] = {"prior": 0.4, "score": 0.35, "volume": 0.15, "explicit": 0.10}

# Token budget of each truncatable layer as a share of the envelope (seed 004 "per-layer token budgets").
# red_lines, crisis, soul and response_contract (the runtime tail: answer format and writer rules) are never
# truncated and have no budget; kb's budget is the evidence channels' caps, less what the never-truncated need.
LAYER_SHARES: dict[str, float] = {"directives": 0.10, "skill": 0.10, "role": 0.05, "correction": 0.10}
TRUNCATABLE_LAYERS = ("directives", "skill", "role", "correction")

# Below this many tokens a cut snippet says too little to be worth its header.
MIN_USEFUL_TOKENS = 40


class BudgetConfigError(ValueError):
    """A budget setting that cannot work; the message names the setting."""


@dataclass(frozen=True)
class Budget:
    profile: str
    total_tokens: int
    law: int
    memory: int
    doc: int
    history: int

    @property
    def evidence_tokens(self) -> int:
        """What the kb layer may hold: the caps of the channels that render into ``<kb_context>`` (all four: the
        conversation's earlier turns are sources there too, tagged ``kind="history"``)."""
        return self.law + self.memory + self.doc + self.history


def _frozen(d: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(d))


@dataclass(frozen=True)
class AssembleConfig:
    profile_tokens: Mapping[str, int] = field(default_factory=lambda: _frozen(PROFILE_TOKENS))
    mode_shares: Mapping[str, Mapping[str, float]] = field(
        default_factory=lambda: _frozen({m: _frozen(s) for m, s in MODE_SHARES.items()}))
    signal_weights: Mapping[str, float] = field(default_factory=lambda: _frozen(SIGNAL_WEIGHTS))
    layer_shares: Mapping[str, float] = field(default_factory=lambda: _frozen(LAYER_SHARES))

    @classmethod
    def from_overrides(cls, *, profile_tokens: Mapping[str, Any] | None = None,
                       mode_shares: Mapping[str, Any] | None = None,
                       signal_weights: Mapping[str, Any] | None = None,
                       layer_shares: Mapping[str, Any] | None = None) -> AssembleConfig:
        profiles = {**PROFILE_TOKENS, **(profile_tokens or {})}
        for name, tokens in profiles.items():
            if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens <= 0:
                raise BudgetConfigError(f"U9_PROFILE_TOKENS[{name!r}] must be a positive integer, got {tokens!r}")
        modes: dict[str, dict[str, float]] = {m: dict(s) for m, s in MODE_SHARES.items()}
        for mode, shares in (mode_shares or {}).items():
            if not isinstance(shares, Mapping):
                raise BudgetConfigError(f"U9_MODE_SHARES[{mode!r}] must be an object of channel shares")
            unknown = set(shares) - set(CHANNEL_KEYS)
            if unknown:
                raise BudgetConfigError(f"U9_MODE_SHARES[{mode!r}] has unknown channels {sorted(unknown)}; "
                                        f"known: {list(CHANNEL_KEYS)}")
            modes[mode] = {**modes.get(mode, dict.fromkeys(CHANNEL_KEYS, 0.0)), **shares}
        for mode, shares in modes.items():
            _check_shares(f"U9_MODE_SHARES[{mode!r}]", shares)
        weights = {**SIGNAL_WEIGHTS, **(signal_weights or {})}
        unknown = set(weights) - set(SIGNAL_WEIGHTS)
        if unknown:
            raise BudgetConfigError(f"U9_SIGNAL_WEIGHTS has unknown signals {sorted(unknown)}; "
                                    f"known: {sorted(SIGNAL_WEIGHTS)}")
        for name, w in weights.items():
            if not isinstance(w, int | float) or w < 0:
                raise BudgetConfigError(f"U9_SIGNAL_WEIGHTS[{name!r}] must be a number >= 0, got {w!r}")
        layers = {**LAYER_SHARES, **(layer_shares or {})}
        unknown = set(layers) - set(TRUNCATABLE_LAYERS)
        if unknown:
            raise BudgetConfigError(f"PROMPT_LAYER_SHARES has layers that take no budget {sorted(unknown)}; "
                                    f"budgeted layers: {list(TRUNCATABLE_LAYERS)}")
        _check_shares("PROMPT_LAYER_SHARES", layers)
        return cls(profile_tokens=_frozen(profiles),
                   mode_shares=_frozen({m: _frozen(s) for m, s in modes.items()}),
                   signal_weights=_frozen({k: float(v) for k, v in weights.items()}),
                   layer_shares=_frozen({k: float(v) for k, v in layers.items()}))


def _check_shares(setting: str, shares: Mapping[str, Any]) -> None:
    for name, share in shares.items():
        if not isinstance(share, int | float) or isinstance(share, bool) or not 0 <= share <= 1:
            raise BudgetConfigError(f"{setting}[{name!r}] must be a share between 0 and 1, got {share!r}")
    if sum(shares.values()) > 1.0 + 1e-9:
        raise BudgetConfigError(f"{setting} shares add up to {sum(shares.values()):.2f}; they may not exceed 1")


def budget_for(profile: str, mode: str, config: AssembleConfig | None = None) -> Budget:
    profiles = config.profile_tokens if config is not None else PROFILE_TOKENS
    modes = config.mode_shares if config is not None else MODE_SHARES
    if profile not in profiles:
        raise ValueError(f"U9_BUDGET_PROFILE must be one of {sorted(profiles)}, got {profile!r}")
    total = profiles[profile]
    shares = modes.get(mode, modes["law"])
    return Budget(profile, total, *(int(total * shares[c]) for c in CHANNEL_KEYS))


def layer_budgets(total_tokens: int, evidence_tokens: int, config: AssembleConfig | None = None
                  ) -> dict[str, int]:
    """Per-layer token budgets of the truncatable layers; kb gets the evidence channels' caps."""
    shares = config.layer_shares if config is not None else LAYER_SHARES
    budgets = {layer: int(total_tokens * shares.get(layer, 0.0)) for layer in TRUNCATABLE_LAYERS}
    budgets["kb"] = evidence_tokens
    return budgets
