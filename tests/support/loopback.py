"""Servers on loopback for tests of what happens around a dependency: a free port nobody listens on, a server
that accepts and never answers, a real S3 API (moto_server), a real web process of this project."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def closed_port() -> int:
    """A port nothing listens on (bound, then released): connecting is refused at once."""
    return free_port()


@contextmanager
def stalled_server() -> Iterator[int]:
    """A loopback port that accepts every connection and never answers: a dependency hanging mid-request."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)  # read nothing, answer nothing, keep it open

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join(timeout=2)
        for conn in held:
            conn.close()
        server.close()


def _wait_listening(proc: subprocess.Popen[bytes], port: int, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"{what} exited with {proc.returncode}") from None
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"{what} did not listen on {port} within {START_TIMEOUT_S}s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()


@contextmanager
def moto_server(log_path: Path) -> Iterator[str]:
    """A real S3 API server (moto_server) on a free loopback port."""
    port = free_port()
    with log_path.open("wb") as log:
        moto = Path(sys.executable).with_name("moto_server")
        proc = subprocess.Popen([str(moto), "-H", "127.0.0.1", "-p", str(port)], stdout=log,
                                stderr=subprocess.STDOUT)
        try:
            _wait_listening(proc, port, "moto_server")
            yield f"http://127.0.0.1:{port}"
        finally:
            _stop(proc)


def manage(args: list[str], env: Mapping[str, str]) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env={**os.environ, **env}, check=True,
                   capture_output=True, timeout=120)


@contextmanager
def web_process(env: Mapping[str, str], log_path: Path) -> Iterator[str]:
    """This project's WSGI application in a process of its own (``tests/support/wsgi_serve.py``), waited for on
    /healthz (which needs no database, so it answers even when the database is the thing under test)."""
    port = free_port()
    with log_path.open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "tests.support.wsgi_serve", str(port)], cwd=ROOT,
                                env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            _wait_listening(proc, port, "the web process")
            deadline = time.monotonic() + START_TIMEOUT_S
            while httpx.get(f"{base}/healthz", timeout=5).status_code != 200:
                if time.monotonic() > deadline:
                    raise RuntimeError("the web process never answered /healthz")
                time.sleep(0.2)
            yield base
        finally:
            _stop(proc)
