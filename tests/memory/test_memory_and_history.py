"""Memory items and conversation history through the HTTP API: what the user told before, and what was asked and
answered earlier in the same conversation, reach U7 with their provenance — for that user of that org only."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.storage import storages
from rest_framework.test import APIClient

from memory.models import MemoryItem
from runs.models import RunContext
from tenancy.auth import api_key_create
from tests.conftest import post_run
from tests.factories import SpecialistFactory, org_create

FACT = "Я працюю бухгалтером у приватній компанії з 2019 року."
MEMORY_QUESTION = "Що я раніше казав про свою роботу бухгалтером?"
LEAVE_QUESTION = "Скільки календарних днів триває щорічна основна відпустка?"


def ask(api: APIClient, capture: Any, question: str, **extra: Any) -> dict[str, Any]:
    with capture(execute=True):
        created = post_run(api, question=question, specialist="labour", **extra)
    assert created.status_code == 202, created.content
    return api.get(f"/api/v1/runs/{created.json()['id']}").json()


def remember(api: APIClient, user_ref: str, text: str) -> Any:
    return api.post("/api/v1/memory", {"user_ref": user_ref, "text": text}, format="json")


def stranger_api() -> APIClient:
    org = org_create("stranger")
    SpecialistFactory(org=org, slug="labour")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key_create(org=org)}")
    return client


@pytest.mark.django_db
def test_a_memory_item_is_created_listed_read_and_deleted_with_its_stored_text(api, specialist,
                                                                               django_capture_on_commit_callbacks):
    created = remember(api, "u1", FACT)

    assert created.status_code == 201, created.content
    item = created.json()
    assert (item["user_ref"], item["text"], item["source_run"]) == ("u1", FACT, None)
    key = MemoryItem.objects.get(pk=item["id"]).r2_key
    assert storages["snippets"].exists(key)
    assert [i["id"] for i in api.get("/api/v1/memory?user_ref=u1").json()] == [item["id"]]
    assert api.get("/api/v1/memory?user_ref=u2").json() == []
    assert api.get(f"/api/v1/memory/{item['id']}").json()["text"] == FACT
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"/api/v1/memory/{item['id']}").status_code == 204
    assert api.get(f"/api/v1/memory/{item['id']}").status_code == 404 and not storages["snippets"].exists(key)


@pytest.mark.django_db
@pytest.mark.parametrize("body, message", [
    ({"user_ref": "u1", "text": "   "}, "text must not be empty"),
    ({"user_ref": "u1", "text": "\u200b\u200d\ufeff\u0301"}, "text must not be empty"),
    ({"user_ref": "", "text": FACT}, "user_ref must not be empty"),
    ({"user_ref": "u1", "text": "х" * 1001}, "the limit is 1000"),
    ({"text": FACT}, "user_ref"),
])
def test_bad_memory_input_gets_400_and_stores_nothing(api, specialist, body, message):
    response = api.post("/api/v1/memory", body, format="json")

    assert response.status_code == 400 and message in response.json()["detail"]
    assert MemoryItem.objects.count() == 0


@pytest.mark.django_db
def test_a_memory_question_gets_the_users_fact_as_evidence_and_no_one_else_does(
        api, specialist, catalog, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    remember(api, "u1", FACT)
    remember(api, "u1", "У мене двоє дітей віком до шести років.")

    run = ask(api, capture, MEMORY_QUESTION, user_ref="u1")

    assert run["status"] == "done", run
    memory = [e for e in run["evidence"] if e["source"] == "memory"]
    assert len(memory) == 1 and memory[0]["label"].startswith("memory:"), run["evidence"]
    prompt = RunContext.objects.get(run_id=run["id"]).document["assembled_prompt"]
    assert [s["source"] for s in prompt["snippets"]].count("memory") == 1
    assert "бухгалтером у приватній компанії" in run["answer"]["text"]
    stranger = stranger_api()
    for seen in (ask(api, capture, MEMORY_QUESTION, user_ref="u2"),
                 ask(stranger, capture, MEMORY_QUESTION, user_ref="u1")):
        assert not [e for e in seen["evidence"] if e["source"] == "memory"]
        assert "бухгалтером у приватній компанії" not in (seen["answer"] or {}).get("text", "")
    item_id = MemoryItem.objects.get(text=FACT).pk
    assert stranger.get(f"/api/v1/memory/{item_id}").status_code == 404
    assert stranger.delete(f"/api/v1/memory/{item_id}").status_code == 404


@pytest.mark.django_db
def test_a_later_turn_sees_the_earlier_ones_of_its_conversation_newest_first_and_bounded(
        api, specialist, catalog, settings, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    settings.HISTORY_MAX_TURNS = 2
    first = ask(api, capture, LEAVE_QUESTION, user_ref="u1", conversation_id="c1")
    second = ask(api, capture, "Чи можна поділити щорічну відпустку на частини?", user_ref="u1",
                 conversation_id="c1")
    ask(api, capture, "Що передбачає ст. 36 КЗпП?", user_ref="u1", conversation_id="c1")

    later = ask(api, capture, "А якщо працівнику менше вісімнадцяти років?", user_ref="u1", conversation_id="c1")

    assert first["status"] == second["status"] == later["status"] == "done"
    assert later["conversation_id"] == "c1" and later["user_ref"] == "u1"
    history = [e for e in later["evidence"] if e["source"] == "history"]
    assert [e["label"] for e in history] == ["history:1", "history:2"]  # HISTORY_MAX_TURNS=2 of the three
    prompt = RunContext.objects.get(run_id=later["id"]).document["assembled_prompt"]
    keys = [s["r2_key"] for s in prompt["snippets"] if s["source"] == "history"]
    assert keys and storages["snippets"].exists(keys[0])
    with storages["snippets"].open(keys[0]) as fh:
        assert "Запитання: Що передбачає ст. 36 КЗпП?" in fh.read().decode()  # the newest earlier turn
    assert prompt["budget"]["history_chars"] > 0


@pytest.mark.django_db
def test_another_user_or_conversation_starts_without_history(api, specialist, catalog,
                                                             django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    ask(api, capture, LEAVE_QUESTION, user_ref="u1", conversation_id="c1")

    for extra in ({"user_ref": "u2", "conversation_id": "c1"}, {"user_ref": "u1", "conversation_id": "c2"}, {}):
        run = ask(api, capture, LEAVE_QUESTION, **extra)
        assert not [e for e in run["evidence"] if e["source"] == "history"], extra
    other_org = ask(stranger_api(), capture, LEAVE_QUESTION, user_ref="u1", conversation_id="c1")
    assert other_org["evidence"] and not [e for e in other_org["evidence"] if e["source"] == "history"]


@pytest.mark.django_db
def test_a_short_follow_up_is_searched_with_the_previous_question_of_its_conversation(
        api, specialist, catalog, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    ask(api, capture, LEAVE_QUESTION, user_ref="u1", conversation_id="c1")
    follow_up = "А для неповнолітніх?"

    later = ask(api, capture, follow_up, user_ref="u1", conversation_id="c1")
    alone = ask(api, capture, follow_up, user_ref="u1", conversation_id="c2")

    plan = RunContext.objects.get(run_id=later["id"]).document["search_plan"]
    assert plan["steps"][0]["query"] == f"{LEAVE_QUESTION} {follow_up}"
    # with the context the search reaches the leave articles; the bare question has nothing to stand on
    law = [e["article_ref"] for e in later["evidence"] if e["source"] == "lldbi"]
    assert "КЗпП ст. 75" in law
    alone_plan = RunContext.objects.get(run_id=alone["id"]).document["search_plan"]
    # (the Constitution's seats search the same words within it alone: weight < 1)
    assert [s["query"] for s in alone_plan["steps"] if s["weight"] == 1] == [follow_up]
