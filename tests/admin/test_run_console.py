"""The run side of the console through the admin: the run page of a real finished run, its snippet links, the list
filters and search, cancel and re-run from a stage, and the dashboard."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from flags.registry import PROMPT_ASSEMBLER_ENABLED
from knowledge.snippets import SnippetStore
from llm.models import CostLedgerEntry
from runs.models import Run, RunContext, StageEvent
from tests.admin.conftest import PASSWORD, new_specialist

pytestmark = pytest.mark.django_db


def login(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def page_of(client: Client, run: Run) -> str:
    response = client.get(reverse("admin:runs_run_change", args=[run.pk]))
    assert response.status_code == 200
    return response.content.decode()


def bare_run(specialist, status=Run.Status.DONE, document=None, **kwargs) -> Run:
    run = Run.objects.create(org=specialist.org, specialist=specialist, question="Питання?", status=status,
                             **kwargs)
    RunContext.objects.create(run=run, document=document or {})
    return run


def test_the_run_page_shows_timeline_sections_prompt_ledger_and_path(superuser, finished_run):
    html = page_of(login(superuser), finished_run)

    assert html.count('data-chart="stage timeline"') == 1
    for stage in ("U1", "U4", "U9", "U12"):
        assert re.search(rf">{stage}</text>", html), stage
    assert "not run" in html  # U6 had nothing to do on this question: its lane is empty
    for section in ("intake", "query_profile", "raw_hits", "evidence_assembly", "assembled_prompt", "answer"):
        assert f'data-section="{section}"' in html, section
    assert "lawSourceRefs" in html and "/snippet/?key=" in html
    assert 'id="ledger-table"' in html and "total" in html
    assert re.search(r'id="prompt-path">\s*<strong>legacy</strong>', html)
    assert 'id="shadow' in html


def test_a_law_source_opens_its_text_from_storage(superuser, finished_run):
    client = login(superuser)
    ref = finished_run.context.document["assembled_prompt"]["lawSourceRefs"][0]

    response = client.get(reverse("admin:runs_run_snippet", args=[finished_run.pk]), {"key": ref["r2_key"]})

    assert response.status_code == 200
    assert SnippetStore().get(ref["r2_key"])[:60] in response.content.decode()


def test_a_snippet_the_run_did_not_reference_is_not_served(superuser, finished_run):
    response = login(superuser).get(reverse("admin:runs_run_snippet", args=[finished_run.pk]),
                                    {"key": "lldbi/other/st1-000000/c0.txt"})

    assert response.status_code == 404


def test_masked_sections_are_marked_and_a_corrupt_one_is_flagged(superuser, specialist):
    run = bare_run(specialist, document={"evidence_assembly": {"items": [], "support_level": "weak"},
                                         "gate_decision": {"expand": "nonsense"},
                                         "_masked": ["evidence_assembly"]})

    html = page_of(login(superuser), run)

    masked = re.search(r'<details class="ctx-section masked" data-section="evidence_assembly">.*?</summary>', html,
                       re.S)
    assert masked and "masked (stale)" in masked.group(0)
    assert "does not match its contract" in html


def test_the_layered_path_shows_on_the_run_page(superuser, specialist):
    manifest = [{"id": "red_lines", "priority": 1, "neverTruncate": True, "tokenBudget": None, "tokens": 12}]
    run = bare_run(specialist, flags={PROMPT_ASSEMBLER_ENABLED: True}, document={"assembled_prompt": {
        "meta": {"mode": "law", "assembler": "layered"}, "lawSourceRefs": [], "budget": {"law_chars": 0},
        "layer_manifest": manifest}})

    html = page_of(login(superuser), run)

    assert re.search(r'id="prompt-path">\s*<strong>layered</strong>', html)
    assert 'id="layer-manifest"' in html and "neverTruncate" in html and "red_lines" in html


def test_the_run_list_filters(superuser, specialist):
    plain = bare_run(specialist)
    retried = bare_run(specialist)
    now = timezone.now()
    StageEvent.objects.create(run=retried, stage="U4", attempt=2, step=6, started_at=now, outcome="ok")
    waiting = bare_run(specialist, status=Run.Status.AWAITING_CLARIFICATION)
    gap = bare_run(specialist, document={"coverage_gap": {"reason": "ACT_FOUND_IN_CATALOG_NOT_INDEXED",
                                                          "acts": []}})
    failed = bare_run(specialist, status=Run.Status.FAILED)
    client = login(superuser)
    url = reverse("admin:runs_run_changelist")

    def ids(**params: str) -> set[str]:
        response = client.get(url, params)
        assert response.status_code == 200
        return {r.pk.hex[:8] for r in response.context["cl"].result_list}

    assert ids(retries="yes") == {retried.pk.hex[:8]}
    assert plain.pk.hex[:8] in ids(retries="no") and retried.pk.hex[:8] not in ids(retries="no")
    assert ids(clarification="yes") == {waiting.pk.hex[:8]}
    assert ids(gap="yes") == {gap.pk.hex[:8]}
    assert ids(status__exact="failed") == {failed.pk.hex[:8]}
    assert len(ids(specialist__id__exact=str(specialist.pk))) == 5


def test_the_run_list_searches_by_question_and_by_id(superuser, specialist):
    one = bare_run(specialist)
    Run.objects.filter(pk=one.pk).update(question="Чи можна звільнити працівника під час відпустки?")
    other = bare_run(specialist)
    client = login(superuser)
    url = reverse("admin:runs_run_changelist")

    def found(q: str) -> set:
        return {r.pk for r in client.get(url, {"q": q}).context["cl"].result_list}

    assert found("звільнити") == {one.pk}
    assert found(str(other.pk)) == {other.pk}
    assert found(str(other.pk)[:8]) == {other.pk}


def test_cancel_stops_a_queued_run_and_refuses_a_finished_one(superuser, specialist):
    queued = bare_run(specialist, status=Run.Status.QUEUED)
    done = bare_run(specialist)
    client = login(superuser)

    client.post(reverse("admin:runs_run_cancel", args=[queued.pk]))
    refused = client.post(reverse("admin:runs_run_cancel", args=[done.pk]), follow=True)

    queued.refresh_from_db()
    assert queued.status == Run.Status.CANCELLED and queued.finished_at is not None
    assert Run.objects.get(pk=done.pk).status == Run.Status.DONE
    assert "already done" in refused.content.decode()


def test_staff_who_may_only_view_runs_cannot_act_on_them(viewer, specialist):
    queued = bare_run(specialist, status=Run.Status.QUEUED)
    client = login(viewer)

    html = page_of(client, queued)
    response = client.post(reverse("admin:runs_run_cancel", args=[queued.pk]))

    assert 'id="cancel-run"' not in html
    assert response.status_code == 403 and Run.objects.get(pk=queued.pk).status == Run.Status.QUEUED


def test_rerun_from_a_stage_makes_a_new_run_and_keeps_the_old_one(superuser, finished_run,
                                                                 django_capture_on_commit_callbacks):
    client = login(superuser)
    old_doc = dict(finished_run.context.document)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("admin:runs_run_rerun", args=[finished_run.pk]), {"stage": "U9"})

    new = Run.objects.exclude(pk=finished_run.pk).get()
    assert response.status_code == 302 and str(new.pk) in response["Location"]
    assert new.status == Run.Status.DONE, new.error
    assert [e.stage for e in new.events.order_by("step")] == ["U9", "U10", "U11", "U12"]
    assert new.flags == finished_run.flags and new.flag_overrides == finished_run.flags
    assert new.context.document["evidence_assembly"] == old_doc["evidence_assembly"]  # kept, not recomputed
    assert new.context.document["rerun_of"] == {"run": str(finished_run.pk), "from_stage": "U9"}
    old = RunContext.objects.get(run=finished_run)
    assert old.document["superseded_by"] == str(new.pk)
    assert {k: v for k, v in old.document.items() if k != "superseded_by"} == old_doc  # old artifacts stay
    assert "superseded" in page_of(client, finished_run)


def test_rerun_refuses_a_run_that_is_still_going_and_an_unknown_stage(superuser, specialist):
    running = bare_run(specialist, status=Run.Status.RUNNING)
    done = bare_run(specialist)
    client = login(superuser)

    busy = client.post(reverse("admin:runs_run_rerun", args=[running.pk]), {"stage": "U4"}, follow=True)
    unknown = client.post(reverse("admin:runs_run_rerun", args=[done.pk]), {"stage": "U13"}, follow=True)

    assert "cancel it first" in busy.content.decode()
    assert "nknown stage &#x27;U13&#x27;; choose one of U1" in unknown.content.decode()
    assert Run.objects.count() == 2


def test_the_dashboard_draws_three_charts_from_runs_events_and_ledger(superuser, specialist):
    today = timezone.now()
    done = bare_run(specialist)
    bare_run(specialist, status=Run.Status.FAILED)
    Run.objects.filter(pk=done.pk).update(created_at=today - timedelta(days=2))
    for ms in (100, 200, 300, 400, 1000):
        StageEvent.objects.create(run=done, stage="U4", attempt=ms, step=ms, started_at=today, duration_ms=ms,
                                  outcome="ok")
    CostLedgerEntry.objects.create(run=done, stage="U10", provider="openai", model="gpt-4o-mini",
                                   cost_usd=Decimal("0.0123"), prompt_tokens=1000, idempotency_key="k1")
    client = login(superuser)

    response = client.get(reverse("admin:runs_run_dashboard"))
    html = response.content.decode()

    assert response.status_code == 200
    for chart in ("runs per day by status", "stage latency p50 / p95", "spend per day by model (USD)"):
        assert f'data-chart="{chart}"' in html
    assert "p50 300 ms · p95 1 s · n=5" in html
    assert "openai/gpt-4o-mini" in html and "done: 1" in html and "failed: 1" in html
    assert client.get(reverse("admin:runs_run_dashboard"), {"days": "x"}).status_code == 400


def test_a_run_from_another_specialist_stays_out_of_a_specialist_filter(superuser, specialist):
    mine = bare_run(specialist)
    theirs = bare_run(new_specialist())

    result = login(superuser).get(reverse("admin:runs_run_changelist"),
                                  {"specialist__id__exact": str(specialist.pk)}).context["cl"].result_list

    assert [r.pk for r in result] == [mine.pk] and theirs.pk not in {r.pk for r in result}


def test_the_run_list_and_the_flag_screen_cost_the_same_queries_for_3_rows_or_12(superuser, specialist,
                                                                                 ):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from flags.services import flags_sync_registry

    flags_sync_registry()
    client = login(superuser)

    def queries(url: str) -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        return len(ctx.captured_queries)

    for _ in range(3):
        bare_run(new_specialist(org=specialist.org))
    few = (queries(reverse("admin:runs_run_changelist")), queries(reverse("admin:flags_specialistflags_changelist")))
    for _ in range(9):
        bare_run(new_specialist())
    many = (queries(reverse("admin:runs_run_changelist")), queries(reverse("admin:flags_specialistflags_changelist")))

    assert many == few


def test_a_rerun_from_u1_keeps_the_old_flag_snapshot_even_after_the_flag_changed(superuser, finished_run,
                                                                                 django_capture_on_commit_callbacks):
    from flags.services import flag_override_set, flags_sync_registry
    from runs.services import run_rerun_from

    flag = next(f for f in flags_sync_registry() if f.key == PROMPT_ASSEMBLER_ENABLED)
    flag_override_set(flag=flag, specialist=finished_run.specialist, enabled=True, actor=superuser)

    with django_capture_on_commit_callbacks(execute=True):
        new = run_rerun_from(run=finished_run, stage="U1")

    new.refresh_from_db()
    assert new.status == Run.Status.DONE, new.error
    assert new.flags[PROMPT_ASSEMBLER_ENABLED] is False  # the snapshot of the run it repeats, not today's flag
    assert new.events.order_by("step").values_list("stage", flat=True)[0] == "U1"
    assert set(new.context.document) - {"_masked", "rerun_of"} <= set(finished_run.context.document)
