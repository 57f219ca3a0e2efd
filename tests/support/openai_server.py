"""A scriptable OpenAI-protocol server on 127.0.0.1 for tests that drive the real ``openai`` SDK.

Each request to ``POST /v1/chat/completions`` consumes the next scripted behaviour (or the default one when
the script is empty). A behaviour is a dict with any of:

- ``delay_s``: sleep this long before answering (to provoke client timeouts);
- ``disconnect``: close the socket without answering (to provoke connection errors);
- ``status``: answer with this HTTP status; anything >= 400 sends an OpenAI-style error body (or ``body``);
- ``headers``: extra response headers, e.g. ``{"retry-after": "0"}``;
- ``body``: a raw JSON body to send instead of the generated one;
- ``reply``: the assistant text (default: a fixed answer);
- ``usage``: a wire-format usage dict, or ``None`` to omit usage (default: counted from message lengths);
- ``finish_reason``: default ``"stop"``.

Usage::

    with FakeOpenAIServer() as server:
        server.script([{"status": 429, "headers": {"retry-after": "0"}}, {"reply": "ok"}])
        client = openai.OpenAI(api_key="test", base_url=server.base_url)
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_REPLY = "Відповідь тестового сервера."
_UNSET: Any = object()


def _approx_tokens(text: str) -> int:
    # Deterministic and cheap; tests needing exact counts script their own usage.
    return max(1, (len(text) + 3) // 4)


def _usage_for(messages: list[dict[str, Any]], reply: str) -> dict[str, Any]:
    prompt = sum(_approx_tokens(str(m.get("content") or "")) for m in messages)
    completion = _approx_tokens(reply)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0},
    }


def _scripted_usage(behaviour: dict[str, Any], messages: list[dict[str, Any]], reply: str) -> dict[str, Any] | None:
    """The behaviour's usage (``total_tokens`` filled in), none when it says ``None``, else counted."""
    usage = behaviour.get("usage", _UNSET)
    if usage is _UNSET:
        return _usage_for(messages, reply)
    if usage is not None and "total_tokens" not in usage:
        return {**usage, "total_tokens": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)}
    return usage  # the script's own dict (or None), passed through as written


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep pytest output clean

    def do_POST(self) -> None:
        body = self._read_body()
        number, behaviour = self.server.fake._record_and_next(
            self.path, {k.lower(): v for k, v in self.headers.items()}, body
        )
        if self._answered_otherwise(behaviour):
            return
        headers = dict(behaviour.get("headers") or {})
        reply = str(behaviour.get("reply", DEFAULT_REPLY))
        usage = _scripted_usage(behaviour, list(body.get("messages") or []), reply)
        model = str(body.get("model") or "unknown")
        finish_reason = str(behaviour.get("finish_reason", "stop"))
        completion_id = f"chatcmpl-fake{number}"
        created = int(time.time())
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._send_stream(completion_id, created, model, reply, finish_reason,
                              usage if include_usage else None, headers)
            return
        payload = behaviour.get("body") or {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                         "finish_reason": finish_reason}],
        }
        if usage is not None and "body" not in behaviour:
            payload["usage"] = usage
        self._send_json(int(behaviour.get("status", 200)), payload, headers)

    def _read_body(self) -> dict[str, Any]:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: dict[str, Any] = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        return body

    def _answered_otherwise(self, behaviour: dict[str, Any]) -> bool:
        """The scripted delay, then a hang-up, an unknown route or a scripted error status instead of a completion."""
        if behaviour.get("delay_s"):
            time.sleep(float(behaviour["delay_s"]))
        if behaviour.get("disconnect"):
            self.close_connection = True
            return True
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
            return True
        status = int(behaviour.get("status", 200))
        if status >= 400:
            error = behaviour.get("body") or {
                "error": {"message": f"scripted failure {status}", "type": "test_error", "code": str(status)}
            }
            self._send_json(status, error, dict(behaviour.get("headers") or {}))
            return True
        return False

    def _send_json(self, status: int, payload: object, headers: dict[str, str] | None = None) -> None:
        try:
            data = json.dumps(payload, ensure_ascii=False).encode()
        except UnicodeEncodeError:  # a lone surrogate in a scripted reply: escaped ("\\ud800"), as a server sends it
            data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client timed out and left; that is the point of delay tests

    def _send_stream(self, completion_id: str, created: int, model: str, reply: str, finish_reason: str,
                     usage: dict[str, Any] | None, headers: dict[str, str]) -> None:
        def chunk(choices: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> bytes:
            event = {"id": completion_id, "object": "chat.completion.chunk", "created": created,
                     "model": model, "choices": choices, **(extra or {})}
            return f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode()

        pieces = reply.split(" ")
        events = [chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
        for i, piece in enumerate(pieces):
            text = piece if i == len(pieces) - 1 else piece + " "
            events.append(chunk([{"index": 0, "delta": {"content": text}, "finish_reason": None}]))
        events.append(chunk([{"index": 0, "delta": {}, "finish_reason": finish_reason}]))
        if usage is not None:
            events.append(chunk([], {"usage": usage}))
        events.append(b"data: [DONE]\n\n")
        try:
            # HTTP/1.0 framing: the body ends when we close the socket, so no chunked encoding is needed.
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            for event in events:
                self.wfile.write(event)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a handler still sleeping for a delay test must not hold up stop()
    fake: FakeOpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up mid-response are expected here, not test failures


class FakeOpenAIServer:
    """Start with ``start()`` or a ``with`` block; ``base_url`` ends in ``/v1`` like the real API."""

    _HOST = "127.0.0.1"  # loopback only: tests must never reach a real network

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[dict[str, Any]] = deque()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._count = 0
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.default_behaviour: dict[str, Any] = {}

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("server not started")
        return f"http://{self._HOST}:{self._server.server_address[1]}/v1"

    def script(self, behaviours: list[dict[str, Any]]) -> None:
        """Queue behaviours, one per coming request, after any still pending."""
        with self._lock:
            self._queue.extend(dict(b) for b in behaviours)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def _record_and_next(self, path: str, headers: dict[str, str],
                         body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self._count += 1
            self.paths.append(path)
            self.request_headers.append(headers)
            self.requests.append(body)
            behaviour = self._queue.popleft() if self._queue else dict(self.default_behaviour)
            return self._count, behaviour

    def start(self) -> FakeOpenAIServer:
        if self._server is not None:
            return self
        server = _Server((self._HOST, 0), _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@contextmanager
def openai_gateway(settings: Any, *, max_retries: int | None = None,
                   api_key: str | None = "sk-test-not-real") -> Iterator[FakeOpenAIServer]:
    """The LLM gateway's provider set to the real openai SDK talking to a fresh loopback server, for the block; the
    process's provider is rebuilt on the way in and out (``settings``: pytest-django's fixture, undone after)."""
    from llm.gateway import get_provider

    with FakeOpenAIServer() as fake:
        settings.LLM_PROVIDER = "openai"
        settings.OPENAI_BASE_URL = fake.base_url
        if api_key is not None:
            settings.OPENAI_API_KEY = api_key
        if max_retries is not None:
            settings.OPENAI_MAX_RETRIES = max_retries
        get_provider.cache_clear()
        try:
            yield fake
        finally:
            get_provider.cache_clear()
