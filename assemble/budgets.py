"""U9 budgets (seed 000): token envelopes per profile and per-mode shares across the evidence channels."""

from __future__ import annotations

from dataclasses import dataclass

PROFILE_TOKENS = {"compact": 4_000, "standard": 8_000, "extended": 16_000}

# Share of the envelope per channel, by query mode: law questions give law most of the room, memory-heavy
# ones give it to memory (seed 000 "snippet/char caps per mode").
MODE_SHARES: dict[str, dict[str, float]] = {
    "law": {"law": 0.80, "memory": 0.05, "doc": 0.0, "history": 0.15},
    "mixed": {"law": 0.50, "memory": 0.10, "doc": 0.30, "history": 0.10},
    "memory": {"law": 0.30, "memory": 0.50, "doc": 0.10, "history": 0.10},
}

# Below this many tokens a cut snippet says too little to be worth its header.
MIN_USEFUL_TOKENS = 40


@dataclass(frozen=True)
class Budget:
    profile: str
    total_tokens: int
    law: int
    memory: int
    doc: int
    history: int


def budget_for(profile: str, mode: str) -> Budget:
    if profile not in PROFILE_TOKENS:
        raise ValueError(f"U9_BUDGET_PROFILE must be one of {sorted(PROFILE_TOKENS)}, got {profile!r}")
    total = PROFILE_TOKENS[profile]
    shares = MODE_SHARES.get(mode, MODE_SHARES["law"])
    return Budget(profile, total, *(int(total * shares[c]) for c in ("law", "memory", "doc", "history")))
