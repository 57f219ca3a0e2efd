"""The one door every model call goes through. It picks the provider, times the call and writes exactly one
CostLedgerEntry per (run, stage, attempt, call ordinal): a redelivered task finds its row and is not billed twice."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from functools import lru_cache

from django.conf import settings
from django.db import IntegrityError, transaction

from llm.pricing import PRICE_VERSION, cost_usd, price_for
from llm.types import Completion, Message, Provider, ProviderError
from runs.models import CostLedgerEntry

logger = logging.getLogger(__name__)


@lru_cache(maxsize=4)
def get_provider(name: str) -> Provider:
    if name == "offline":
        from llm.providers.offline import OfflineProvider

        return OfflineProvider()
    if name == "openai":
        from llm.providers.openai_provider import OpenAIProvider

        return OpenAIProvider(api_key=settings.OPENAI_API_KEY or "not-set", base_url=settings.OPENAI_BASE_URL or None,
                              timeout_s=settings.OPENAI_TIMEOUT_S, max_retries=settings.OPENAI_MAX_RETRIES)
    raise ValueError(f"unknown LLM_PROVIDER {name!r} (known: offline, openai)")


@dataclass
class LlmGateway:
    """Bound to one stage attempt of one run; counts its calls so each has a stable ordinal."""

    run_id: str | None
    stage: str
    attempt: int
    provider_name: str = field(default_factory=lambda: settings.LLM_PROVIDER)
    _ordinal: int = 0

    def complete(self, *, role: str, model: str, messages: list[Message], max_tokens: int) -> Completion:
        self._ordinal += 1
        key = f"{self.run_id}:{self.stage}:{self.attempt}:{self._ordinal}"
        provider = get_provider(self.provider_name)
        started = time.monotonic()
        try:
            completion = provider.complete(model=model, messages=messages, max_tokens=max_tokens)
        except ProviderError as exc:
            self._record(key, role, provider.name, model, None, started, error=str(exc))
            raise
        self._record(key, role, provider.name, model, completion, started)
        return completion

    def _record(self, key: str, role: str, provider: str, model: str, completion: Completion | None,
                started: float, error: str = "") -> None:
        price, known = price_for(provider, completion.model if completion else model)
        prompt = completion.prompt_tokens if completion else 0
        out = completion.completion_tokens if completion else 0
        cached = completion.cached_tokens if completion else 0
        if not known:
            logger.warning("model missing from the price table; billed at zero", extra={"model": model})
        fields = {
            "run_id": self.run_id, "stage": self.stage, "attempt": self.attempt, "call_ordinal": self._ordinal,
            "kind": "chat", "role": role, "provider": provider,
            "model": completion.model if completion else model,
            "prompt_tokens": prompt, "completion_tokens": out, "cached_tokens": cached,
            "cost_usd": cost_usd(price, prompt_tokens=prompt, completion_tokens=out, cached_tokens=cached),
            "price_version": PRICE_VERSION if known else f"{PRICE_VERSION}:unpriced",
            "latency_ms": int((time.monotonic() - started) * 1000),
            "status": "error" if error else "ok", "error": error[:300],
        }
        try:
            with transaction.atomic():
                CostLedgerEntry.objects.get_or_create(idempotency_key=key, defaults=fields)
        except IntegrityError:  # a concurrent redelivery wrote it first: one row is the point
            pass
