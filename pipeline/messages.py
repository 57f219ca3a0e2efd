"""What a model is sent and what it answers. The writer stage (U10) speaks these to its port; the providers in
``llm/`` implement that port, so the shapes live here, below both."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    usage_reported: bool = True  # False: counts come from our tokenizer, not the provider
    raw_finish_reason: str | None = None
    extra: dict[str, object] = field(default_factory=dict)
