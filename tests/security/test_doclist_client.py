"""Issue 12, item 9: the DocList client carries a Bearer key, so it follows no redirect, speaks https unless told
otherwise, and reads a bounded answer."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from knowledge.doclist_client import DoclistClient, DoclistUnavailable

GOOD = {"query": "КЗпП", "reason": "ACT_NOT_FOUND_IN_CATALOG", "candidates": []}


class Handler(BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None]] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        Handler.seen.append((self.path, self.headers.get("Authorization")))
        if self.path.startswith("/moved"):
            self.send_response(307)
            self.send_header("Location", "/elsewhere/api/v1/doclist/resolve")
            self.end_headers()
            return
        body = json.dumps(GOOD).encode() if not self.path.startswith("/huge") else b"[" + b"0," * 2_000_000 + b"0]"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[str]:
    Handler.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_a_redirect_is_not_followed_and_the_key_goes_nowhere_else(server):
    client = DoclistClient(api_url=f"{server}/moved", api_key="lx_secret", allow_http=True)

    with pytest.raises(DoclistUnavailable, match="HTTP 307"):
        client.resolve("КЗпП")

    assert [path for path, _ in Handler.seen] == ["/moved/api/v1/doclist/resolve"]


def test_http_is_refused_unless_allowed(server):
    with pytest.raises(DoclistUnavailable, match="only https"):
        DoclistClient(api_url=server, api_key="lx_secret").resolve("КЗпП")
    assert Handler.seen == []  # nothing was sent

    assert DoclistClient(api_url=server, allow_http=True).resolve("КЗпП").reason == "ACT_NOT_FOUND_IN_CATALOG"


def test_an_answer_over_the_size_limit_is_refused(server):
    client = DoclistClient(api_url=f"{server}/huge", allow_http=True, max_response_bytes=64 * 1024)

    with pytest.raises(DoclistUnavailable, match="DOCLIST_MAX_RESPONSE_BYTES"):
        client.resolve("КЗпП")
