"""What a provider is. Providers know nothing of runs or the ledger: the gateway does. The messages and the
completion they exchange are the writer's shapes (pipeline/messages.py)."""

from __future__ import annotations

from typing import Protocol

from pipeline.messages import Completion, Message


class ProviderError(Exception):
    """A model call failed after the provider's bounded retries; the message says why."""


class Provider(Protocol):
    name: str

    def complete(self, *, model: str, messages: list[Message], max_tokens: int) -> Completion: ...
