"""The assembler's settings, read in one place and validated (the stages themselves never read settings)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from assemble.budgets import AssembleConfig
from assemble.layers import TokenCounter
from llm.tokenizer import get_encoding

TRIAGE_MODES = ("deterministic", "model")


@dataclass(frozen=True)
class TriageSettings:
    mode: str
    model: str
    timeout_s: float


def assemble_config() -> AssembleConfig:
    return AssembleConfig.from_overrides(profile_tokens=settings.U9_PROFILE_TOKENS,
                                         mode_shares=settings.U9_MODE_SHARES,
                                         signal_weights=settings.U9_SIGNAL_WEIGHTS,
                                         layer_shares=settings.PROMPT_LAYER_SHARES)


def triage_settings() -> TriageSettings:
    if settings.U9_TRIAGE not in TRIAGE_MODES:
        raise ValueError(f"U9_TRIAGE must be one of {list(TRIAGE_MODES)}, got {settings.U9_TRIAGE!r}")
    return TriageSettings(settings.U9_TRIAGE, settings.LLM_TRIAGE_MODEL, settings.U9_TRIAGE_TIMEOUT_S)


def counter_for_encoding(name: str) -> TokenCounter:
    """A token counter for a recorded tokenizer id, so a replay counts the way the run counted."""
    encoding = get_encoding(name)

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return count
