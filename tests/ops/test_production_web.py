"""A web process in production mode (DEBUG off, https redirect on) after ``collectstatic``, whose database is down:
it stays alive, says which dependency is down, and still serves the admin's CSS through WhiteNoise."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.loopback import closed_port, manage, web_process

HTTPS = {"X-Forwarded-Proto": "https"}  # what the TLS-terminating proxy adds (SECURE_PROXY_SSL_HEADER below)


@pytest.fixture(scope="module")
def production_web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    var = tmp_path_factory.mktemp("prod-var")
    env = {"LEXERY_MODE": "production", "SECRET_KEY": "k" * 20 + "production-test-secret-key-0123456789",
           "ALLOWED_HOSTS": "127.0.0.1", "LEXERY_VAR_DIR": str(var), "LOG_LEVEL": "INFO", "LOG_FORMAT": "json",
           "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
           "DATABASE_URL": f"postgres://postgres@127.0.0.1:{closed_port()}/lexery", "CELERY_BROKER_URL": "",
           # a closed port refuses at once: the bound only has to outlast a loaded machine's first connection
           # attempt (1 s once timed out under CI and reported «… within 1 s» instead of the refusal)
           "READYZ_DB_TIMEOUT_S": "5"}
    manage(["collectstatic", "--no-input", "-v", "0"], env)
    log = var / "web.log"
    with web_process(env, log) as base:
        yield base, log


def test_healthz_is_200_and_readyz_503_naming_the_database(production_web: tuple[str, Path]) -> None:
    base, _ = production_web
    # the probes come over plain http: no redirect to https for them
    assert httpx.get(f"{base}/healthz", timeout=10).status_code == 200
    ready = httpx.get(f"{base}/readyz", timeout=10)
    assert ready.status_code == 503
    body = ready.json()
    assert body["down"] == ["database"]
    assert body["checks"]["database"] == {"state": "down", "reason": "the database did not answer"}
    assert "OperationalError" not in ready.text and "connection" not in ready.text.lower()


def test_other_pages_still_redirect_to_https(production_web: tuple[str, Path]) -> None:
    base, _ = production_web
    response = httpx.get(f"{base}/admin/login/", timeout=10)
    assert response.status_code == 301 and response.headers["location"].startswith("https://")


def test_the_admin_has_its_css_with_debug_off(production_web: tuple[str, Path]) -> None:
    base, _ = production_web
    # given the login page (it needs no database)
    page = httpx.get(f"{base}/admin/login/", headers=HTTPS, timeout=10)
    assert page.status_code == 200, page.text[:500]
    # when its stylesheet links are followed
    hrefs = re.findall(r'href="(/static/admin/css/[^"]+\.css)"', page.text)
    assert hrefs, "the login page links no admin stylesheet"
    assert all(re.search(r"\.[0-9a-f]{12}\.css$", h) for h in hrefs), hrefs  # hashed names: cacheable forever
    for href in hrefs:
        css = httpx.get(f"{base}{href}", headers={**HTTPS, "Accept-Encoding": "gzip"}, timeout=10)
        # then WhiteNoise serves each one, compressed and cacheable
        assert css.status_code == 200, href
        assert css.headers["content-type"].startswith("text/css")
        assert "max-age=315360000" in css.headers["cache-control"]
        assert css.headers.get("content-encoding") == "gzip"


def test_the_request_id_is_echoed_and_on_the_log_lines_of_the_request(production_web: tuple[str, Path]) -> None:
    base, log = production_web
    response = httpx.get(f"{base}/readyz", headers={"X-Request-ID": "probe-42"}, timeout=10)
    assert response.headers["X-Request-ID"] == "probe-42"
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    mine = [line for line in lines if line.get("request_id") == "probe-42"]
    assert any(line["msg"] == "readiness check failed" and line["check"] == "database" for line in mine), lines[-5:]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", line["ts"]) for line in mine)
