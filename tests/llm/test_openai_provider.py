"""OpenAIProvider against a loopback OpenAI-protocol server, through the real SDK and real HTTP."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from llm.providers import openai_provider
from llm.providers.openai_provider import OpenAIProvider
from llm.tokenizer import count_tokens
from llm.types import Message, ProviderError
from tests.support.openai_server import FakeOpenAIServer

MODEL = "gpt-4o-mini"
MESSAGES = [
    Message("system", "Ти юридичний помічник. Відповідай коротко."),
    Message("user", "Скільки днів щорічної відпустки за КЗпП?"),
]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def waits() -> list[float]:
    return []


def make_provider(server: FakeOpenAIServer, waits: list[float], **overrides: Any) -> OpenAIProvider:
    options: dict[str, Any] = {
        "api_key": "sk-test-not-real",
        "base_url": server.base_url,
        "timeout_s": 5.0,
        "max_retries": 2,
        "sleep": waits.append,  # records the backoff instead of spending it
    }
    options.update(overrides)
    return OpenAIProvider(**options)


def test_normal_reply_maps_text_and_usage_including_cached_tokens(server, waits):
    server.script([{
        "reply": "24 календарні дні (стаття 6 Закону «Про відпустки»).",
        "usage": {
            "prompt_tokens": 1200,
            "completion_tokens": 17,
            "prompt_tokens_details": {"cached_tokens": 1024},
        },
    }])

    completion = make_provider(server, waits).complete(model=MODEL, messages=MESSAGES, max_tokens=200)

    assert completion.text == "24 календарні дні (стаття 6 Закону «Про відпустки»)."
    assert completion.model == MODEL
    assert completion.prompt_tokens == 1200
    assert completion.completion_tokens == 17
    assert completion.cached_tokens == 1024
    assert completion.usage_reported is True
    assert completion.raw_finish_reason == "stop"
    assert completion.extra["attempts"] == 1
    assert waits == []


def test_usage_without_prompt_token_details_counts_zero_cached(server, waits):
    server.script([{"reply": "Так.", "usage": {"prompt_tokens": 40, "completion_tokens": 2}}])

    completion = make_provider(server, waits).complete(model=MODEL, messages=MESSAGES, max_tokens=50)

    assert (completion.prompt_tokens, completion.completion_tokens, completion.cached_tokens) == (40, 2, 0)
    assert completion.usage_reported is True


def test_missing_usage_falls_back_to_tiktoken_counts(server, waits):
    reply = "Щонайменше 24 календарні дні за відпрацьований робочий рік."
    server.script([{"reply": reply, "usage": None}])

    completion = make_provider(server, waits).complete(model=MODEL, messages=MESSAGES, max_tokens=200)

    expected_prompt = sum(count_tokens(m.content, MODEL) for m in MESSAGES)
    assert completion.usage_reported is False
    assert completion.prompt_tokens == expected_prompt > 0
    assert completion.completion_tokens == count_tokens(reply, MODEL) > 0
    assert completion.cached_tokens == 0
    assert completion.text == reply


def test_rate_limit_then_success_retries_once_honouring_retry_after(server, waits):
    server.script([{"status": 429, "headers": {"retry-after": "0"}}, {"reply": "Після паузи."}])

    completion = make_provider(server, waits).complete(model=MODEL, messages=MESSAGES, max_tokens=50)

    assert completion.text == "Після паузи."
    assert completion.extra["attempts"] == 2
    assert len(server.requests) == 2
    assert waits == [0.0]  # the server asked for no wait, so the jittered backoff was not used


def test_retry_after_is_capped_at_backoff_max(server, waits):
    server.script([{"status": 429, "headers": {"retry-after": "30"}}, {}])

    completion = make_provider(server, waits, backoff_max_s=2.0).complete(
        model=MODEL, messages=MESSAGES, max_tokens=50
    )

    assert completion.extra["attempts"] == 2
    assert waits == [2.0]


def test_backoff_without_retry_after_is_exponential_full_jitter(server, waits, monkeypatch):
    bounds: list[tuple[float, float]] = []

    def upper_bound(low: float, high: float) -> float:
        bounds.append((low, high))
        return high

    monkeypatch.setattr(openai_provider.random, "uniform", upper_bound)
    server.script([{"status": 503}, {"status": 502}, {"status": 500}, {"reply": "Нарешті."}])

    completion = make_provider(server, waits, max_retries=3, backoff_base_s=0.5, backoff_max_s=1.5).complete(
        model=MODEL, messages=MESSAGES, max_tokens=50
    )

    assert completion.text == "Нарешті."
    assert completion.extra["attempts"] == 4
    assert bounds == [(0, 0.5), (0, 1.0), (0, 1.5)]  # doubles each time, then stops at the cap
    assert waits == [0.5, 1.0, 1.5]


def test_server_errors_beyond_max_retries_raise_provider_error(server, waits):
    server.script([{"status": 500}, {"status": 500}, {"reply": "never reached"}])

    with pytest.raises(ProviderError) as caught:
        make_provider(server, waits, max_retries=1).complete(model=MODEL, messages=MESSAGES, max_tokens=50)

    message = str(caught.value)
    assert "500" in message and MODEL in message and "2 attempts" in message
    assert len(server.requests) == 2
    assert len(waits) == 1
    assert server.pending == 1
    assert isinstance(caught.value.__cause__, openai.InternalServerError)


def test_bad_request_is_not_retried(server, waits):
    server.script([{"status": 400}, {"reply": "must not be requested"}])

    with pytest.raises(ProviderError) as caught:
        make_provider(server, waits, max_retries=3).complete(model=MODEL, messages=MESSAGES, max_tokens=50)

    message = str(caught.value)
    assert "400" in message and MODEL in message and "1 attempt" in message
    assert len(server.requests) == 1
    assert waits == []


def test_slow_response_times_out_after_bounded_attempts(server, waits):
    server.script([{"delay_s": 1.5}, {"delay_s": 1.5}, {"delay_s": 1.5}])
    provider = make_provider(server, waits, timeout_s=0.3, max_retries=1)

    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        provider.complete(model=MODEL, messages=MESSAGES, max_tokens=50)
    elapsed = time.monotonic() - started

    assert "timeout" in str(caught.value) and "2 attempts" in str(caught.value)
    assert len(server.requests) == 2
    assert len(waits) == 1
    assert elapsed < 1.5  # the client gave up on its own timeout instead of waiting for the slow answer


def test_dropped_connection_is_retried(server, waits):
    server.script([{"disconnect": True}, {"reply": "Зʼєднання відновлено."}])

    completion = make_provider(server, waits).complete(model=MODEL, messages=MESSAGES, max_tokens=50)

    assert completion.text == "Зʼєднання відновлено."
    assert completion.extra["attempts"] == 2


def test_request_body_carries_model_messages_and_max_tokens(server, waits):
    make_provider(server, waits).complete(model="gpt-4.1-mini", messages=MESSAGES, max_tokens=321)

    assert len(server.requests) == 1
    body = server.requests[0]
    assert body["model"] == "gpt-4.1-mini"
    assert body["max_tokens"] == 321
    assert body["messages"] == [{"role": m.role, "content": m.content} for m in MESSAGES]
    assert server.paths == ["/v1/chat/completions"]
    assert server.request_headers[0].get("authorization") == "Bearer sk-test-not-real"


def test_fake_server_streams_sse_the_sdk_can_read(server):
    server.script([{
        "reply": "Три слова тут",
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 0}},
    }])
    client = openai.OpenAI(api_key="sk-test-not-real", base_url=server.base_url, timeout=5.0, max_retries=0)

    stream = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "Привіт"}],
        max_tokens=20,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)

    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Три слова тут"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 3
    assert server.requests[0]["stream"] is True
