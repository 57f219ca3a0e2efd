"""OpenAI chat completions behind the Provider protocol.

The SDK's own retries are switched off: a retry we cannot see is a call the ledger and the logs never hear
about, so this module does the bounded retrying itself and reports how many attempts a completion took.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

import openai

from llm.tokenizer import count_tokens
from llm.types import Completion, Message, ProviderError

logger = logging.getLogger(__name__)


class _Retryable(Exception):
    """A failed attempt worth repeating: carries what the final error message and the backoff need."""

    def __init__(self, status: str, retry_after_s: float | None) -> None:
        super().__init__(status)
        self.status = status
        self.retry_after_s = retry_after_s


def _retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The server's requested wait in seconds, or None when absent or not a plain number.

    HTTP-date forms are ignored on purpose: OpenAI sends seconds, and a wait that depends on clock skew is
    worse than our own jittered backoff.
    """
    if not headers:
        return None
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return max(seconds, 0.0) if seconds == seconds else None  # NaN compares unequal to itself


def _attempts_word(attempts: int) -> str:
    return f"{attempts} attempt" if attempts == 1 else f"{attempts} attempts"


class OpenAIProvider:
    name = "openai"

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None,
        timeout_s: float,
        max_retries: int,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 8.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        # An empty string from settings means "the real API", which the SDK spells as None.
        self._client = openai.OpenAI(
            api_key=api_key, base_url=base_url or None, timeout=timeout_s, max_retries=0
        )
        self._max_retries = max(int(max_retries), 0)
        self._backoff_base_s = backoff_base_s
        self._backoff_max_s = backoff_max_s
        self._sleep = sleep

    def complete(self, *, model: str, messages: list[Message], max_tokens: int) -> Completion:
        payload = [{"role": m.role, "content": m.content} for m in messages]
        attempts = 0
        while True:
            attempts += 1
            try:
                response = self._call(model=model, payload=payload, max_tokens=max_tokens, attempts=attempts)
            except _Retryable as failure:
                if attempts > self._max_retries:
                    raise ProviderError(
                        f"OpenAI model {model!r} failed with status {failure.status} "
                        f"after {_attempts_word(attempts)}."
                    ) from failure.__cause__
                delay = self._backoff_s(attempts - 1, failure.retry_after_s)
                logger.warning(
                    "openai retry model=%s status=%s attempt=%d wait_s=%.2f",
                    model, failure.status, attempts, delay,
                )
                self._sleep(delay)
                continue
            return self._to_completion(response, model=model, messages=messages, attempts=attempts)

    def _call(self, *, model: str, payload: list[dict[str, str]], max_tokens: int, attempts: int) -> Any:
        """One HTTP attempt. Raises _Retryable for transient failures, ProviderError for final ones."""
        try:
            return self._client.chat.completions.create(
                model=model,
                messages=payload,  # type: ignore[arg-type]  # plain dicts are what the wire format wants
                max_tokens=max_tokens,
            )
        except openai.APITimeoutError as exc:  # before APIConnectionError: it is a subclass
            raise _Retryable("timeout", None) from exc
        except openai.APIConnectionError as exc:
            raise _Retryable("connection error", None) from exc
        except openai.APIStatusError as exc:
            status = exc.status_code
            # 429 (RateLimitError) and 5xx (InternalServerError) are load, not a fault in our request.
            if status == 429 or status >= 500:
                raise _Retryable(str(status), _retry_after_seconds(exc.response.headers)) from exc
            raise ProviderError(
                f"OpenAI model {model!r} rejected the request with status {status} "
                f"after {_attempts_word(attempts)}."
            ) from exc
        except openai.APIError as exc:
            # e.g. a response that does not parse: repeating the same request will not fix it.
            raise ProviderError(
                f"OpenAI model {model!r} returned an unusable response ({type(exc).__name__}) "
                f"after {_attempts_word(attempts)}."
            ) from exc

    def _backoff_s(self, retry_index: int, retry_after_s: float | None) -> float:
        # The server knows its own load better than our formula, but a huge retry-after must not stall a run.
        if retry_after_s is not None:
            return min(retry_after_s, self._backoff_max_s)
        # Full jitter keeps many workers that failed together from retrying together.
        return random.uniform(0, min(self._backoff_max_s, self._backoff_base_s * 2**retry_index))

    def _to_completion(
        self, response: Any, *, model: str, messages: list[Message], attempts: int
    ) -> Completion:
        if not response.choices:
            raise ProviderError(
                f"OpenAI model {model!r} returned no choices with status 200 "
                f"after {_attempts_word(attempts)}."
            )
        choice = response.choices[0]
        text = choice.message.content or ""
        usage = response.usage
        if usage is not None:
            details = usage.prompt_tokens_details
            prompt_tokens = int(usage.prompt_tokens or 0)
            completion_tokens = int(usage.completion_tokens or 0)
            cached_tokens = int(getattr(details, "cached_tokens", None) or 0)
            usage_reported = True
        else:
            # Some OpenAI-compatible servers omit usage; a labelled estimate beats a silent zero cost.
            prompt_tokens = sum(count_tokens(m.content, model) for m in messages)
            completion_tokens = count_tokens(text, model)
            cached_tokens = 0
            usage_reported = False
        return Completion(
            text=text,
            # The requested name, not the dated snapshot the API echoes: the price table is keyed on it.
            model=model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cached_tokens=cached_tokens,
            usage_reported=usage_reported,
            raw_finish_reason=choice.finish_reason,
            extra={"attempts": attempts, "response_id": response.id, "response_model": response.model},
        )
