"""Recovery as a client meets it (seeds 001/002): coverage-gap honesty, clarification and resume from U7,
cancellation — through the HTTP API with the real pipeline, index and catalog."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from engine.shell import execute_stage
from runs.models import Run, StageEvent
from tests.conftest import post_run


def start(api: APIClient, capture: Any, question: str) -> dict[str, Any]:
    with capture(execute=True):
        created = post_run(api, question=question, specialist="labour")
    assert created.status_code == 202, created.content
    return api.get(f"/api/v1/runs/{created.json()['id']}").json()


def stages(api: APIClient, run_id: str) -> list[str]:
    return [e["stage"] for e in api.get(f"/api/v1/runs/{run_id}/events").json()["events"]]


@pytest.mark.django_db
def test_an_act_missing_from_the_index_is_named_as_a_gap_and_never_cited(api, specialist, catalog,
                                                                         django_capture_on_commit_callbacks):
    run = start(api, django_capture_on_commit_callbacks,
                "Яка ставка податку на доходи фізичних осіб згідно з Податковим кодексом України?")

    assert run["status"] == "done", run
    assert run["coverage_gap"]["reason"] == "ACT_FOUND_IN_CATALOG_NOT_INDEXED"
    assert [a["nreg"] for a in run["coverage_gap"]["acts"]] == ["2755-17"]
    assert "Податковий кодекс України" in run["answer"]["text"]
    assert all(c["act_nreg"] != "2755-17" for c in run["answer"]["citations"])
    assert "U6" in stages(api, run["id"])


@pytest.mark.django_db
def test_an_act_missing_from_the_catalog_is_a_gap_too(api, specialist, catalog, django_capture_on_commit_callbacks):
    run = start(api, django_capture_on_commit_callbacks, "Що каже Закон про неіснуюче щодо відпусток?")

    assert run["status"] == "done", run
    assert run["coverage_gap"]["reason"] == "ACT_NOT_FOUND_IN_CATALOG"
    assert "неіснуюче" in run["coverage_gap"]["acts"][0]["title"]


@pytest.mark.django_db
def test_an_ambiguous_code_waits_for_the_user_then_resumes_from_u7_with_the_chosen_act(
        api, specialist, catalog, django_capture_on_commit_callbacks):
    run = start(api, django_capture_on_commit_callbacks, "Що передбачає стаття 4 процесуального кодексу?")

    assert run["status"] == "awaiting_clarification", run
    offered = {o["nreg"] for o in run["clarification"]["options"]}
    assert {"1618-15", "1798-12", "4651-17"} <= offered
    assert "процесуального кодексу" in run["clarification"]["question"]
    before = stages(api, run["id"])
    assert before.count("U4") == 1 and before[-1] == "U6"

    with django_capture_on_commit_callbacks(execute=True):
        answered = api.post(f"/api/v1/runs/{run['id']}/clarification", {"option": "1618-15"}, format="json")
    assert answered.status_code == 202, answered.content

    done = api.get(f"/api/v1/runs/{run['id']}").json()
    assert done["status"] == "done", done
    after = stages(api, run["id"])[len(before):]
    assert after[0] == "U7" and "U4" not in after  # U4's hits were kept: no retrieval rerun
    refs = [c["article_ref"] for c in done["answer"]["citations"]]
    assert "ЦПК ст. 4" in refs and all(c["act_nreg"] == "1618-15" for c in done["answer"]["citations"])
    assert done["clarification"]["answer"] == "1618-15"


@pytest.mark.django_db
def test_clarification_errors_are_clear(api, specialist, catalog, django_capture_on_commit_callbacks):
    waiting = start(api, django_capture_on_commit_callbacks, "Що передбачає стаття 4 процесуального кодексу?")
    url = f"/api/v1/runs/{waiting['id']}/clarification"

    not_offered = api.post(url, {"option": "322-08"}, format="json")
    assert not_offered.status_code == 400 and "was not offered" in not_offered.json()["detail"]
    both = api.post(url, {"option": "1618-15", "answer": "ЦПК"}, format="json")
    assert both.status_code == 400 and "exactly one" in both.json()["detail"]
    vague = api.post(url, {"answer": "той, що про суди"}, format="json")
    assert vague.status_code == 400 and "could not tell" in vague.json()["detail"]

    with django_capture_on_commit_callbacks(execute=True):
        free_text = api.post(url, {"answer": "Мабуть, ГПК"}, format="json")
    assert free_text.status_code == 202
    again = api.post(url, {"option": "1618-15"}, format="json")
    assert again.status_code == 409 and "not awaiting clarification" in again.json()["detail"]


@pytest.mark.django_db
def test_a_queued_run_can_be_cancelled_once_and_then_runs_nothing(api, specialist, catalog):
    created = post_run(api, question="Скільки триває щорічна відпустка?", specialist="labour").json()

    cancelled = api.post(f"/api/v1/runs/{created['id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert api.post(f"/api/v1/runs/{created['id']}/cancel").status_code == 409

    execute_stage(created["id"], "U1", 1)  # the task that was already on the queue arrives

    assert Run.objects.get(pk=created["id"]).status == "cancelled"
    assert StageEvent.objects.filter(run_id=created["id"]).count() == 0


@pytest.mark.django_db
def test_the_clarify_command_resumes_a_waiting_run_and_refuses_a_finished_one(
        api, specialist, catalog, django_capture_on_commit_callbacks):
    from django.core.management import CommandError, call_command

    waiting = start(api, django_capture_on_commit_callbacks, "Що передбачає стаття 4 процесуального кодексу?")

    with django_capture_on_commit_callbacks(execute=True):
        call_command("clarify", waiting["id"], "--answer", "КПК")

    assert Run.objects.get(pk=waiting["id"]).status == "done"
    with pytest.raises(CommandError, match="not awaiting clarification"):
        call_command("clarify", waiting["id"], "--option", "1618-15")
    with pytest.raises(CommandError, match="no run"):
        call_command("clarify", "not-a-run", "--option", "1618-15")


@pytest.mark.django_db
def test_a_clarification_answered_with_an_act_not_indexed_ends_in_a_coverage_gap_for_it(
        api, specialist, catalog, django_capture_on_commit_callbacks):
    # given the Commercial Procedure Code is in the catalog but not indexed, and the user picks it
    from knowledge.models import Act

    Act.objects.filter(nreg="1798-12").update(indexed=False)
    run = start(api, django_capture_on_commit_callbacks, "Що передбачає стаття 4 процесуального кодексу?")
    assert run["status"] == "awaiting_clarification", run
    assert "1798-12" in {o["nreg"] for o in run["clarification"]["options"]}
    # when
    with django_capture_on_commit_callbacks(execute=True):
        answered = api.post(f"/api/v1/runs/{run['id']}/clarification", {"option": "1798-12"}, format="json")
    assert answered.status_code == 202, answered.content
    # then the run says the act is not in the knowledge base, and cites nothing in its name
    done = api.get(f"/api/v1/runs/{run['id']}").json()
    assert done["status"] == "done", done
    gpk = {"nreg": "1798-12", "title": "Господарський процесуальний кодекс України"}
    assert done["coverage_gap"] == {"reason": "ACT_FOUND_IN_CATALOG_NOT_INDEXED", "acts": [gpk]}
    assert "Господарський процесуальний кодекс України" in done["answer"]["text"]
    assert "немає в базі" in done["answer"]["text"]
    assert all(c["act_nreg"] != "1798-12" for c in done["answer"]["citations"])
    assert done["support_level"] != "strong"


@pytest.mark.django_db
def test_an_unreachable_doclist_is_retried_once_then_the_answer_says_the_act_could_not_be_checked(
        api, specialist, catalog, settings, django_capture_on_commit_callbacks):
    # given a remote DocList on a loopback port nobody listens on
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.DOCLIST_API_URL = f"http://127.0.0.1:{port}"
    settings.DOCLIST_TIMEOUT_S = 1
    # when a question names an act the lexicon cannot bind
    run = start(api, django_capture_on_commit_callbacks, "Що каже Закон про неіснуюче щодо відпусток?")
    # then U6 retried once (back through U4), then forwarded with the phrase declared as unchecked
    walk = stages(api, run["id"])
    assert walk.count("U6") == 2 and walk.count("U4") == 2, walk
    assert run["status"] == "done", run
    assert run["coverage_gap"]["reason"] == "ACT_NOT_CHECKED_DOCLIST_UNAVAILABLE"
    assert [a["title"] for a in run["coverage_gap"]["acts"]] == ["Закон про неіснуюче"]
    assert "не вдалося перевірити" in run["answer"]["text"] and "Закон про неіснуюче" in run["answer"]["text"]
    events = api.get(f"/api/v1/runs/{run['id']}/events").json()["events"]
    u6 = [e for e in events if e["stage"] == "U6"]
    assert [e["next_action"] for e in u6] == ["RUN_U4", "RUN_U7"]
