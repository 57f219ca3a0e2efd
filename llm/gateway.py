"""The one door every model call goes through. It picks the provider and the model for the role, checks the
run's cost cap and its org's daily cap before spending anything, times the call and writes exactly one
CostLedgerEntry per (run, stage, attempt, role, call ordinal, delivery): a retry of the same delivery finds its row
and is not billed twice.

The role is part of the idempotency key because two gateways may serve one stage attempt — the stage's own
(the writer at U10) and ORCH's, which may consult a model after the same attempt — and each numbers its calls
from 1. Without the role the second would find the first one's row and go unrecorded.

The delivery is part of it from the second delivery on (issue 11): a stage task redelivered after its worker died
sends its model calls again, and the provider bills them again. Each delivery's calls are their own rows
(``delivery`` 2, 3, …), so the run's cap, the org's daily cap and the spend report see what the provider charges.
The first delivery keeps the key it always had.

The gateway knows nothing of runs: the caller passes the caps (``SpendCaps``); what was spent it reads from its
own ledger."""

from __future__ import annotations

import logging
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import QuerySet, Sum
from django.utils import timezone

from llm.budget import Budget, CallPlan, CostCapExceeded, OrgSpendCapExceeded, SpendCaps, plan_call, usd
from llm.models import CostLedgerEntry
from llm.pricing import PRICE_VERSION, cost_usd, price_for
from llm.routing import model_for_role
from llm.tokenizer import count_tokens
from llm.types import Completion, Message, Provider, ProviderError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class OpenAIConfig:
    api_key: str
    base_url: str
    timeout_s: float
    max_retries: int


def openai_config() -> OpenAIConfig:
    return OpenAIConfig(api_key=settings.OPENAI_API_KEY or "not-set", base_url=settings.OPENAI_BASE_URL or "",
                        timeout_s=float(settings.OPENAI_TIMEOUT_S), max_retries=int(settings.OPENAI_MAX_RETRIES))


@lru_cache(maxsize=8)
def get_provider(name: str, config: OpenAIConfig | None = None) -> Provider:
    """One provider per (name, connection settings): a changed OPENAI_BASE_URL gets a new client."""
    if name == "offline":
        from llm.providers.offline import OfflineProvider

        return OfflineProvider()
    if name == "openai":
        from llm.providers.openai_provider import OpenAIProvider

        cfg = config or openai_config()
        return OpenAIProvider(api_key=cfg.api_key, base_url=cfg.base_url or None, timeout_s=cfg.timeout_s,
                              max_retries=cfg.max_retries)
    raise ValueError(f"unknown LLM_PROVIDER {name!r} (known: offline, openai)")


def _spent(rows: QuerySet[CostLedgerEntry], exclude_key: str) -> Decimal:
    # Not counting the call being planned: a retry of the same delivery must not count itself.
    return rows.exclude(idempotency_key=exclude_key).aggregate(s=Sum("cost_usd"))["s"] or Decimal("0")


def run_budget(run_id: str, caps: SpendCaps, *, exclude_key: str) -> Budget | None:
    """The run's cap and what the run has spent so far, every delivery of every stage included."""
    if caps.run_cap_usd is None:
        return None
    return Budget(cap=caps.run_cap_usd, spent=_spent(CostLedgerEntry.objects.filter(run_id=run_id), exclude_key))


def org_daily_budget(caps: SpendCaps, *, exclude_key: str) -> Budget | None:
    """The run's org's spend since local midnight against ``ORG_DAILY_SPEND_CAP_USD`` (empty: no cap). The per-run
    cap bounds one run; this bounds a client that starts many (500 runs in a row were all accepted, issue 12)."""
    raw = str(settings.ORG_DAILY_SPEND_CAP_USD or "").strip()
    if not raw or caps.org_id is None:
        return None
    midnight = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    today = CostLedgerEntry.objects.filter(run__org_id=caps.org_id, created_at__gte=midnight)
    return Budget(cap=Decimal(raw), spent=_spent(today, exclude_key))


def _write(key: str, fields: dict[str, object]) -> None:
    try:
        with transaction.atomic():
            CostLedgerEntry.objects.get_or_create(idempotency_key=key, defaults=fields)
    except IntegrityError:  # a concurrent redelivery wrote it first: one row is the point
        pass


def embedding_tokens(model: str, texts: Iterable[str]) -> int:
    # Exact for OpenAI embedding models (cl100k); for local models a tokenizer-independent size measure.
    return sum(count_tokens(t, model) for t in texts)


@dataclass
class LlmGateway:
    """Bound to one delivery of one stage attempt of one run; numbers its calls per role so each has a stable
    ordinal. A run's chat calls need ``caps`` (the caller knows the run; the gateway does not)."""

    run_id: str | None
    stage: str
    attempt: int
    provider_name: str = field(default_factory=lambda: settings.LLM_PROVIDER)
    _ordinals: Counter[str] = field(default_factory=Counter)
    caps: SpendCaps | None = field(default=None, kw_only=True)
    delivery: int = field(default=1, kw_only=True)  # which delivery of the stage task this is (1: the first)

    def __post_init__(self) -> None:
        if self.delivery < 1:
            raise ValueError(f"delivery counts from 1, not {self.delivery}")

    def _next_key(self, role: str, ordinal: int | None = None) -> tuple[str, int]:
        self._ordinals[role] = ordinal if ordinal is not None else self._ordinals[role] + 1
        ordinal = self._ordinals[role]
        if self.run_id is None:  # not part of a run: nothing to deduplicate against, every call is its own
            return f"unbound:{uuid.uuid4()}", ordinal
        key = f"{self.run_id}:{self.stage}:{self.attempt}:{role}:{ordinal}"
        return (key if self.delivery == 1 else f"{key}:d{self.delivery}"), ordinal

    def _budgets(self, key: str) -> tuple[Budget | None, Budget | None]:
        """(the run's, the org's daily) budget for the call with this key; none for a call outside a run."""
        if self.run_id is None:
            return None, None
        if self.caps is None:  # fail closed: a run's call without its caps would spend past every cap
            raise ValueError("a run's model call needs its SpendCaps (the run's cap and org)")
        return (run_budget(self.run_id, self.caps, exclude_key=key),
                org_daily_budget(self.caps, exclude_key=key))

    def complete(self, *, role: str, messages: list[Message], max_tokens: int,
                 model: str | None = None) -> Completion:
        """Call the role's model (or ``model``). Raises ProviderError, or CostCapExceeded before any spending."""
        requested = model or model_for_role(role)
        key, ordinal = self._next_key(role)
        provider = get_provider(self.provider_name, openai_config() if self.provider_name == "openai" else None)
        base = {"kind": "chat", "role": role, "provider": provider.name, "call_ordinal": ordinal}
        budget, daily = self._budgets(key)
        try:
            plan = plan_call(provider=provider.name, model=requested, fallback=settings.LLM_FALLBACK_MODEL,
                             messages=messages, max_tokens=max_tokens, budget=budget)
            if daily is not None and not daily.fits(plan.forecast):
                raise OrgSpendCapExceeded(
                    f"org daily spend cap {usd(daily.cap)} USD (ORG_DAILY_SPEND_CAP_USD): spent today "
                    f"{usd(daily.spent)} + forecast {plan.forecast.describe()} exceeds it")
        except CostCapExceeded as exc:
            logger.warning("model call refused by a cost cap", extra={"model": requested, "role": role})
            self._record(key, {**base, "model": requested, "status": "capped", "error": str(exc)[:300]})
            raise
        if plan.downgraded_from:
            logger.warning("model downgraded to stay under the run's cost cap",
                           extra={"model": plan.model, "from": plan.downgraded_from, "role": role})
        started = time.monotonic()
        try:
            completion = provider.complete(model=plan.model, messages=messages, max_tokens=max_tokens)
        except ProviderError as exc:
            self._record(key, {**base, "model": plan.model, "status": "error", "error": str(exc)[:300],
                               "latency_ms": _ms(started)})
            raise
        self._record(key, {**base, **self._usage(provider.name, completion), "latency_ms": _ms(started),
                           **_outcome(plan)})
        return completion

    def record_embedding(self, *, model: str, texts: Iterable[str] = (), input_tokens: int | None = None,
                         provider: str = "local", role: str = "query", latency_ms: int = 0,
                         call_ordinal: int | None = None) -> None:
        """One ledger row for an embedding call made by the knowledge layer. Local models cost 0 and are still
        recorded, so a run's ledger shows every model it used. Calls outside a run are not recorded."""
        if self.run_id is None:
            return
        key, ordinal = self._next_key(role, call_ordinal)
        tokens = input_tokens if input_tokens is not None else embedding_tokens(model, texts)
        price, known = price_for(provider, model)
        self._record(key, {
            "kind": "embedding", "role": role, "provider": provider, "model": model, "call_ordinal": ordinal,
            "prompt_tokens": tokens, "latency_ms": max(int(latency_ms), 0),
            "cost_usd": cost_usd(price, prompt_tokens=tokens, completion_tokens=0, cached_tokens=0),
            "price_version": PRICE_VERSION if known else f"{PRICE_VERSION}:unpriced", "status": "ok"})

    def _usage(self, provider: str, completion: Completion) -> dict[str, object]:
        price, known = price_for(provider, completion.model)
        if not known:
            logger.warning("model missing from the price table; billed at zero", extra={"model": completion.model})
        return {
            "model": completion.model, "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": completion.completion_tokens, "cached_tokens": completion.cached_tokens,
            "cost_usd": cost_usd(price, prompt_tokens=completion.prompt_tokens,
                                 completion_tokens=completion.completion_tokens,
                                 cached_tokens=completion.cached_tokens),
            "price_version": PRICE_VERSION if known else f"{PRICE_VERSION}:unpriced",
        }

    def _record(self, key: str, fields: dict[str, object]) -> None:
        _write(key, {"run_id": self.run_id, "stage": self.stage, "attempt": self.attempt, "delivery": self.delivery,
                     **fields})


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _outcome(plan: CallPlan) -> dict[str, str]:
    # The ledger has no note column: a downgrade is its own status and its sentence rides in ``error``.
    if plan.downgraded_from:
        return {"status": "downgraded", "error": plan.note[:300]}
    return {"status": "ok", "error": ""}


def record_embedding_call(*, run_id: str | None, stage: str, attempt: int, call_ordinal: int, model: str,
                          texts: Iterable[str] = (), input_tokens: int | None = None, provider: str = "local",
                          role: str = "query", latency_ms: int = 0, delivery: int = 1) -> None:
    """For callers that hold no gateway (e.g. a search port): the caller numbers its own calls, deterministically,
    so a retry of the same delivery writes the same keys."""
    gateway = LlmGateway(run_id, stage, attempt, delivery=delivery)
    gateway.record_embedding(model=model, texts=texts, input_tokens=input_tokens, provider=provider, role=role,
                             latency_ms=latency_ms, call_ordinal=call_ordinal)
