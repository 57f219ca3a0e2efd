"""The per-run cost cap. Before a call, the gateway forecasts its price from the exact prompt tokens and the
``max_tokens`` it asks for; a call that would take the run past its cap switches to the configured cheaper model
when that one fits, and is refused with a typed error otherwise. Never a silent overspend."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from llm.pricing import cost_usd, price_for
from llm.tokenizer import count_tokens
from llm.types import Message, ProviderError

# OpenAI's chat format wraps every message in a few tokens and primes the reply with three more; counting them
# keeps the forecast an upper bound (the cookbook's "num_tokens_from_messages" uses 3 per message + 3).
TOKENS_PER_MESSAGE = 4
REPLY_PRIMING_TOKENS = 3


class CostCapExceeded(ProviderError):
    """The call would take the run past its cost cap and no cheaper configured model fits; nothing was sent.

    A ProviderError on purpose: callers with a deterministic fallback (the ORCH canary) take it, and a stage
    without one fails the run with this sentence as the reason."""


class OrgSpendCapExceeded(CostCapExceeded):
    """The call would take the run's org past its daily spend cap (``ORG_DAILY_SPEND_CAP_USD``); nothing was sent.
    A CostCapExceeded, so every caller that copes with the run's cap copes with this one the same way."""


def usd(amount: Decimal) -> str:
    return f"{amount:.6f}"


@dataclass(frozen=True)
class Forecast:
    model: str
    prompt_tokens: int
    max_tokens: int
    usd: Decimal
    priced: bool  # False: the model is not in the price table, so the forecast (and the bill) is zero

    def describe(self) -> str:
        return (f"{usd(self.usd)} USD for {self.model} "
                f"({self.prompt_tokens} prompt + {self.max_tokens} max output tokens)")


def forecast(*, provider: str, model: str, messages: list[Message], max_tokens: int) -> Forecast:
    """The most this call can cost: every prompt token at the uncached price, and every allowed output token."""
    prompt = sum(count_tokens(m.content, model) + TOKENS_PER_MESSAGE for m in messages) + REPLY_PRIMING_TOKENS
    price, known = price_for(provider, model)
    amount = cost_usd(price, prompt_tokens=prompt, completion_tokens=max_tokens, cached_tokens=0)
    return Forecast(model=model, prompt_tokens=prompt, max_tokens=max_tokens, usd=amount, priced=known)


@dataclass(frozen=True)
class SpendCaps:
    """What a run's model calls are checked against, given by the caller that knows the run: the run's own cap
    (``RUN_COST_CAP_USD`` as recorded on the run, else its specialist's, else the setting; None: no cap) and the org
    whose daily cap (``ORG_DAILY_SPEND_CAP_USD``) its calls count toward. The gateway adds what was spent, from its
    own ledger."""

    run_cap_usd: Decimal | None
    org_id: int | None


@dataclass(frozen=True)
class Budget:
    cap: Decimal
    spent: Decimal

    def fits(self, f: Forecast) -> bool:
        return self.spent + f.usd <= self.cap


@dataclass(frozen=True)
class CallPlan:
    model: str
    forecast: Forecast
    downgraded_from: str | None = None
    note: str = ""


def plan_call(*, provider: str, model: str, fallback: str, messages: list[Message], max_tokens: int,
              budget: Budget | None) -> CallPlan:
    """Which model to call, or CostCapExceeded. Pure apart from counting tokens."""
    wanted = forecast(provider=provider, model=model, messages=messages, max_tokens=max_tokens)
    if budget is None or budget.fits(wanted):
        return CallPlan(model=model, forecast=wanted)
    over = (f"run cost cap {usd(budget.cap)} USD: spent {usd(budget.spent)} + forecast {wanted.describe()} "
            "exceeds it")
    if fallback and fallback != model:
        cheaper = forecast(provider=provider, model=fallback, messages=messages, max_tokens=max_tokens)
        if budget.fits(cheaper):
            return CallPlan(model=fallback, forecast=cheaper, downgraded_from=model,
                            note=f"downgraded from {model}: {over}; {fallback} forecast {usd(cheaper.usd)} USD fits")
        raise CostCapExceeded(f"{over}; the fallback {fallback} ({usd(cheaper.usd)} USD) does not fit either")
    raise CostCapExceeded(f"{over}; no cheaper model is configured (LLM_FALLBACK_MODEL)")
