"""SENTRY_DSN: with it, an ERROR line of a process reaches the Sentry server named by the DSN (here a loopback
server that records what it is sent); without it, nothing is initialised."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import sentry_sdk

from tests.support.loopback import ROOT


@pytest.fixture
def sentry_server() -> Iterator[tuple[str, list[bytes]]]:
    received: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # http.server names the handler so
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            received.append(gzip.decompress(body) if self.headers.get("Content-Encoding") == "gzip" else body)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://publickey@127.0.0.1:{server.server_address[1]}/1", received
    server.shutdown()
    server.server_close()


SCRIPT = """
import django, logging, sentry_sdk
django.setup()
logging.getLogger("engine.shell").error("stage crashed for the test", extra={"run_id": "r1"})
sentry_sdk.flush(timeout=10)
"""


def test_an_error_line_reaches_the_dsn(sentry_server: tuple[str, list[bytes]]) -> None:
    dsn, received = sentry_server
    env = {**os.environ, "SENTRY_DSN": dsn, "DJANGO_SETTINGS_MODULE": "lexery.settings", "LOG_LEVEL": "ERROR"}
    subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, check=True, timeout=60, capture_output=True)
    events = [body for body in received if b"stage crashed for the test" in body]
    assert events, received
    assert b'"environment":"embedded"' in events[0].replace(b" ", b"")
    assert b'"logger":"engine.shell"' in events[0].replace(b" ", b"")


def test_without_a_dsn_nothing_is_initialised() -> None:
    assert not sentry_sdk.get_client().is_active()
