"""The console in a real browser (Playwright driving Debian's Chromium), as a new operator tries it: log in, find
the specialist, switch prompt_assembler_enabled on for it, see the audit entry, run a question for it and read the
run page — timeline, context sections, evidence, cost. Screenshots land in test-artifacts/admin/."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from flags.registry import PROMPT_ASSEMBLER_ENABLED
from flags.services import flags_sync_registry
from runs.models import Run
from tests.admin.conftest import PASSWORD, run_question

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"]
ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts" / "admin"


def _unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (make install-dev installs requirements/dev.txt)"
    if not CHROMIUM.exists():
        return (f"Chromium is not at {CHROMIUM}: apt-get install -y chromium (.ci/run does it), or set "
                "CHROMIUM_PATH")
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    missing = _unavailable()
    if missing:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"browser tests cannot run in CI: {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread; the test's own ORM calls are still synchronous.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as p:
            chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(15_000)
    tab = context.new_page()
    yield tab
    context.close()


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def log_in(page: Any, base: str, username: str) -> None:
    page.goto(f"{base}/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"{base}/admin/")


def test_an_operator_switches_the_assembler_on_and_inspects_a_run(page, live_server, superuser, specialist,
                                                                  catalog):
    flags_sync_registry()
    base = live_server.url
    log_in(page, base, superuser.username)
    shot(page, "01-index")

    # find the specialist on the flag screen and switch the flag on for it: one click
    page.goto(f"{base}/admin/flags/specialistflags/?q={specialist.slug}")
    toggle = page.locator(f'button[value="{PROMPT_ASSEMBLER_ENABLED}:on"][formaction*="/{specialist.pk}/toggle/"]')
    assert toggle.count() == 1
    toggle.click()
    page.wait_for_selector(".messagelist .success")
    row = page.locator("#result_list tbody tr", has_text=specialist.name).first
    assert "ON" in row.locator(".flag-state").first.inner_text()
    assert "перевизначення спеціаліста" in row.inner_text()
    shot(page, "02-flag-switched-on")

    # the audit entry: who, scope, before → after
    page.goto(f"{base}/admin/flags/flagaudit/")
    entry = page.locator("#result_list tbody tr").first.inner_text()
    assert "root" in entry and f"specialist {specialist.org.slug}/{specialist.slug}" in entry
    assert re.search(r"успадковано\s*→\s*ON", entry), entry
    shot(page, "03-audit")

    # a question for that specialist, through the real pipeline; then its run page
    run = run_question(specialist)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.error
    assert run.flags[PROMPT_ASSEMBLER_ENABLED] is True
    page.goto(f"{base}/admin/runs/run/{run.pk}/change/")
    timeline = page.locator('svg[data-chart="stage timeline"]')
    assert timeline.is_visible()
    assert timeline.locator("rect.bar").count() == run.events.count() >= 11
    assert timeline.locator("text").filter(has_text=re.compile(r"^U12$")).count() == 1
    assert "ON" in page.locator("#prompt-path .flag-state").inner_text()
    assembler = run.context.document["assembled_prompt"]["meta"].get("assembler")
    assert page.locator("#prompt-path strong").inner_text() == (assembler or "layered")
    for section in ("intake", "query_profile", "raw_hits", "evidence_assembly", "assembled_prompt", "answer"):
        assert page.locator(f'details[data-section="{section}"]').count() == 1, section
    details = page.locator('details[data-section="assembled_prompt"]')
    assert not details.locator("pre").is_visible()  # collapsed until asked
    details.locator("summary").click()
    assert details.locator("pre").is_visible() and "lawSourceRefs" in details.locator("pre").inner_text()
    assert page.locator("#ledger-table tr.total").is_visible()
    shot(page, "04-run-page")
    timeline.screenshot(path=str(ARTIFACTS / "05-timeline.png"))

    # the evidence: a law source opens its text from snippet storage
    page.locator("#law-source-refs a").first.click()
    assert len(page.locator("#snippet-text").inner_text()) > 40
    shot(page, "06-snippet")

    page.goto(f"{base}/admin/runs/run/dashboard/")
    assert page.locator("svg.chart").count() == 3
    shot(page, "07-dashboard")


def test_staff_without_the_flag_permission_can_look_but_not_change(page, live_server, viewer, specialist):
    flags_sync_registry()
    base = live_server.url
    log_in(page, base, viewer.username)

    page.goto(f"{base}/admin/flags/specialistflags/")
    assert page.locator("#result_list", has_text=specialist.slug).is_visible()
    assert page.locator("button.flag-btn").count() == 0
    assert page.locator("text=Ви можете переглядати, але не змінювати").is_visible()
    shot(page, "08-viewer-flags")
    page.goto(f"{base}/admin/flags/flagaudit/")
    assert page.locator("#content h1").is_visible()
