"""The I/O the U9 adapter hands to pure code: the triage model call, bounded in time."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from django.db import connections

from assemble.triage import TRIAGE_MAX_TOKENS
from llm.gateway import LlmGateway
from pipeline.messages import Completion, Message


def triage_ask(gateway: LlmGateway, model: str, timeout_s: float) -> Callable[[list[Message]], Completion]:
    """The triage model call through the gateway, given up on after ``timeout_s`` (U9_TRIAGE_TIMEOUT_S).

    The call runs on a helper thread so the wait can be bounded; a late answer still lands in the ledger when it
    arrives. The thread closes its own database connection: Django's connections are per thread."""

    def call(messages: list[Message]) -> Completion:
        def in_thread() -> Completion:
            try:
                return gateway.complete(role="triage", model=model, messages=messages,
                                        max_tokens=TRIAGE_MAX_TOKENS)
            finally:
                connections.close_all()

        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="u9-triage")
        future = pool.submit(contextvars.copy_context().run, in_thread)
        try:
            return future.result(timeout=timeout_s)
        except FutureTimeout:
            raise TimeoutError(f"no answer within U9_TRIAGE_TIMEOUT_S={timeout_s:g}s") from None
        finally:
            pool.shutdown(wait=False)

    return call
