"""The real Redis broker in tests: the URL of the suite's Redis database, a TCP proxy to it that a test closes and
opens (the broker "down" and "back" without touching Redis itself), and a switch that points this process's Celery
app at a broker for one test (the suite otherwise runs with the in-memory broker and eager tasks)."""

from __future__ import annotations

import base64
import json
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis

from tests.support.loopback import free_port

# Every test that talks to Redis uses this one database and flushes it: give each checkout its own (make test
# sets nothing; the default is the suite's).
BROKER_URL = os.environ.get("E2E_BROKER_URL", "redis://127.0.0.1:6379/14")


class BrokerProxy:
    """A TCP proxy to the broker. Closed: nothing listens on its port (connection refused) and every connection it
    relayed is cut, as when the broker's host goes away; opened again on the same port, it relays again."""

    def __init__(self, target_url: str = BROKER_URL, port: int | None = None) -> None:
        parts = urlsplit(target_url)
        self._target = (parts.hostname or "127.0.0.1", parts.port or 6379)
        self.port = port or free_port()
        self.url = urlunsplit((parts.scheme, f"127.0.0.1:{self.port}", parts.path, parts.query, ""))
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.accepted = 0

    @property
    def is_open(self) -> bool:
        return self._listener is not None

    def open(self) -> BrokerProxy:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        listener.settimeout(0.1)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), name="broker-proxy", daemon=True).start()
        return self

    def close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while self._listener is listener:
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:  # closed
                return
            try:
                upstream = socket.create_connection(self._target, timeout=5)
            except OSError:
                client.close()
                continue
            client.settimeout(None)
            upstream.settimeout(None)
            with self._lock:
                if self._listener is not listener:  # closed meanwhile
                    client.close()
                    upstream.close()
                    return
                self._sockets |= {client, upstream}
                self.accepted += 1
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            with self._lock:
                self._sockets -= {src, dst}

    def __enter__(self) -> BrokerProxy:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def celery_broker(url: str) -> Iterator[None]:
    """Point this process's Celery app at ``url`` (connection and producer pools rebuilt for it), then back."""
    from celery import current_app
    from kombu import pools

    keys = ("broker_url", "task_always_eager")

    def repoint(values: dict[str, Any]) -> None:
        pools.reset()  # closes and forgets every pooled connection (kombu keeps one registry per process)
        current_app._pool = None
        current_app.amqp._producer_pool = None
        for key in keys:
            if key in values:
                current_app.conf[key] = values[key]
            else:
                current_app.conf.changes.pop(key, None)

    # Put back the app's own overrides, not the values read now: an unset key reads through to Django's settings,
    # which a test's settings fixture may have changed for its duration only (writing back what it read then left
    # every later test's tasks queued instead of run eagerly).
    before = {key: current_app.conf.changes[key] for key in keys if key in current_app.conf.changes}
    repoint({"broker_url": url, "task_always_eager": False})
    try:
        yield
    finally:
        repoint(before)


def queued_tasks(client: redis.Redis, queue: str) -> list[dict[str, Any]]:
    """The stage tasks waiting in a Redis queue, oldest first: task name and args of each message."""
    tasks = []
    for raw in reversed(client.lrange(queue, 0, -1)):  # kombu LPUSHes and BRPOPs: the tail is the oldest
        message = json.loads(raw)
        body = json.loads(base64.b64decode(message["body"]))
        tasks.append({"task": message["headers"]["task"], "args": body[0]})
    return tasks
