"""What a provider takes and gives back. Providers know nothing of runs or the ledger: the gateway does."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

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


class ProviderError(Exception):
    """A model call failed after the provider's bounded retries; the message says why."""


class Provider(Protocol):
    name: str

    def complete(self, *, model: str, messages: list[Message], max_tokens: int) -> Completion: ...
