"""A versioned price table, USD per one million tokens. Cached input is priced on its own line: billing it as
ordinary input (or as free) is the most common ledger error. Unknown models are priced at zero and say so."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

PRICE_VERSION = "2026-11-01"


@dataclass(frozen=True)
class Price:
    input: Decimal
    cached_input: Decimal
    output: Decimal


PRICES: dict[str, Price] = {
    "gpt-4o-mini": Price(Decimal("0.15"), Decimal("0.075"), Decimal("0.60")),
    "gpt-4o": Price(Decimal("2.50"), Decimal("1.25"), Decimal("10.00")),
    "gpt-4.1-mini": Price(Decimal("0.40"), Decimal("0.10"), Decimal("1.60")),
    "gpt-4.1": Price(Decimal("2.00"), Decimal("0.50"), Decimal("8.00")),
    "text-embedding-3-small": Price(Decimal("0.02"), Decimal("0.02"), Decimal("0")),
}
FREE = Price(Decimal("0"), Decimal("0"), Decimal("0"))
_MILLION = Decimal(1_000_000)


# Providers that run on our own CPU: free, and known to be free (not "unpriced").
FREE_PROVIDERS = frozenset({"offline", "local"})


def price_for(provider: str, model: str) -> tuple[Price, bool]:
    """The price and whether the model was known (offline and local models are free and known)."""
    if provider in FREE_PROVIDERS:
        return FREE, True
    if model in PRICES:
        return PRICES[model], True
    return FREE, False


def cost_usd(price: Price, *, prompt_tokens: int, completion_tokens: int, cached_tokens: int) -> Decimal:
    uncached = max(prompt_tokens - cached_tokens, 0)
    total = (price.input * uncached + price.cached_input * cached_tokens + price.output * completion_tokens)
    return (total / _MILLION).quantize(Decimal("0.00000001"))
