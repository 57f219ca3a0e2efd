"""The embedded database shared by two connections (two processes, or the development server's threads): a
transaction that reads and then writes must wait for another writer, not fail with "database is locked".

Each thread holds its own SQLite connection to one file, as two processes would. The first reads, lets the second
start, then writes; the second reads and writes at once. With SQLite's default (deferred) transactions the first
one's write is refused immediately whatever the timeout; with the settings' ``SQLITE_OPTIONS`` the second waits for
the first to commit and both rows land."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connections, transaction
from django.db.utils import OperationalError

FIRST_HOLDS_S = 1.0  # how long the first transaction keeps its read open before writing (the second starts meanwhile)


@pytest.fixture
def sqlite_file(tmp_path: Path, django_db_blocker: object) -> Iterator[Path]:
    path = tmp_path / "embedded.sqlite3"
    with django_db_blocker.unblock():  # type: ignore[attr-defined]  # pytest-django's blocker, untyped
        yield path


def _register(alias: str, path: Path, options: dict[str, object]) -> None:
    connections.settings[alias] = {**connections.settings["default"], "ENGINE": "django.db.backends.sqlite3",
                                   "NAME": str(path), "OPTIONS": dict(options), "CONN_MAX_AGE": 0,
                                   "CONN_HEALTH_CHECKS": False, "ATOMIC_REQUESTS": False}


def _read_then_write(alias: str, row: int, *, read: threading.Event, wait_for: threading.Event | None,
                     errors: list[str]) -> None:
    try:
        if wait_for is not None:
            wait_for.wait(timeout=5)
        with transaction.atomic(using=alias), connections[alias].cursor() as cursor:
            cursor.execute("SELECT count(*) FROM runs")
            read.set()
            if wait_for is None:
                time.sleep(FIRST_HOLDS_S)  # the other transaction starts meanwhile
            cursor.execute("INSERT INTO runs (id) VALUES (%s)", [row])
    except OperationalError as exc:
        errors.append(str(exc))
    finally:
        read.set()
        connections[alias].close()


def _two_writers(path: Path, options: dict[str, object]) -> tuple[list[str], int]:
    alias = f"embedded_{abs(hash((str(path), tuple(options))))}"
    _register(alias, path, options)
    try:
        with connections[alias].cursor() as cursor:
            cursor.execute("CREATE TABLE IF NOT EXISTS runs (id INTEGER PRIMARY KEY)")
        connections[alias].close()
        first_read, second_read = threading.Event(), threading.Event()
        errors: list[str] = []
        threads = [threading.Thread(target=_read_then_write, args=(alias, 1),
                                    kwargs={"read": first_read, "wait_for": None, "errors": errors}),
                   threading.Thread(target=_read_then_write, args=(alias, 2),
                                    kwargs={"read": second_read, "wait_for": first_read, "errors": errors})]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=20)
        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT count(*) FROM runs")
            rows = int(cursor.fetchone()[0])
        connections[alias].close()
        return errors, rows
    finally:
        connections.settings.pop(alias, None)


def test_two_writers_on_one_file_both_commit(sqlite_file: Path) -> None:
    errors, rows = _two_writers(sqlite_file, settings.SQLITE_OPTIONS)
    assert errors == []
    assert rows == 2


def test_the_default_transactions_lose_one_writer(sqlite_file: Path) -> None:
    """Why the options exist: the same two transactions with SQLite's deferred BEGIN (only the timeout set)."""
    errors, rows = _two_writers(sqlite_file, {"timeout": 30})
    assert errors and "locked" in errors[0]
    assert rows == 1


def test_the_embedded_database_uses_them() -> None:
    if not settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        pytest.skip("the PostgreSQL run: the options are SQLite's")
    options = settings.DATABASES["default"]["OPTIONS"]
    assert options["transaction_mode"] == "IMMEDIATE" and "journal_mode=WAL" in str(options["init_command"])
