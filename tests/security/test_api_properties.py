"""Property tests of the API's doors (issue 12 follow-up): whatever JSON a client sends as a body or as query
parameters, the answer is a documented status with ``{"code", "detail"}`` — never a 5xx — and a refused request
stores nothing. Bounded (``max_examples``) so the file runs in well under a minute."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.models import MemoryItem
from runs.models import Run

# Text with what fuzzers send: NUL and other controls, escaped lone surrogates, combining marks, RTL, zero-width
# characters, emoji, long runs.
TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=300) | st.sampled_from([
    "\x00", "\ud800", "a\udfff", "\u200b\u200e\u202e", "а\u0301\u0301", "ст. 999999999 КЗпП", "x" * 5000, "😀" * 50,
])
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                           max_leaves=8)
PROPERTIES = settings(max_examples=40, deadline=None, derandomize=True,
                      suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def no_throttle(settings: Any) -> None:
    """The examples are a burst from one key; the rate limit is not what these tests are about."""
    settings.API_THROTTLE_RATE = "100000/minute"


def post(api: Any, path: str, body: Any) -> Any:
    # ensure_ascii: a lone surrogate goes over the wire escaped ("\ud800"), as a client's JSON encoder sends it
    return api.generic("POST", path, json.dumps(body, ensure_ascii=True), content_type="application/json")


def assert_an_answer(response: Any, *statuses: int) -> None:
    assert response.status_code in statuses, response.content
    if response.status_code >= 400:
        assert set(response.json()) >= {"code", "detail"} and response.json()["detail"], response.content


@pytest.mark.django_db
@PROPERTIES
@given(question=JSON_VALUES, slug=st.just("labour") | JSON_VALUES, user_ref=JSON_VALUES,
       conversation_id=JSON_VALUES)
def test_any_run_body_is_a_202_or_a_400_that_stores_nothing(api, specialist, question, slug, user_ref,
                                                             conversation_id) -> None:
    body = {"question": question, "specialist": slug, "user_ref": user_ref, "conversation_id": conversation_id}
    before = Run.objects.count()

    response = post(api, "/api/v1/runs", body)

    assert_an_answer(response, 202, 400)
    assert Run.objects.count() == before + (response.status_code == 202)


@pytest.mark.django_db
@PROPERTIES
@given(body=st.dictionaries(st.sampled_from(["user_ref", "text", "source_run"]), JSON_VALUES) | JSON_VALUES)
def test_any_memory_body_is_a_201_or_a_4xx_that_stores_nothing(api, specialist, body) -> None:
    before = MemoryItem.objects.count()

    response = post(api, "/api/v1/memory", body)

    assert_an_answer(response, 201, 400, 404)
    assert MemoryItem.objects.count() == before + (response.status_code == 201)


@pytest.mark.django_db
@PROPERTIES
@given(query=st.dictionaries(st.sampled_from(["from", "to", "group_by", "user_ref", "page", "limit"]),
                             TEXT.filter(lambda t: "\ud800" > t or t > "\udfff"), max_size=4),
       path=st.sampled_from(["/api/v1/costs", "/api/v1/memory", "/api/v1/documents"]))
def test_any_query_string_is_a_200_or_a_400(api, specialist, query, path) -> None:
    encoded = urlencode({k: v.encode("utf-8", "surrogatepass") for k, v in query.items()})

    assert_an_answer(api.get(f"{path}?{encoded}"), 200, 400)


@pytest.mark.django_db
@PROPERTIES
@given(run_id=TEXT.filter(lambda t: "/" not in t and t.strip()), action=st.sampled_from(["", "/events", "/cancel"]))
def test_any_run_id_in_the_path_is_a_404(api, specialist, run_id, action) -> None:
    from urllib.parse import quote

    path = f"/api/v1/runs/{quote(run_id.encode('utf-8', 'surrogatepass'), safe='')}{action}"
    response = api.post(path) if action == "/cancel" else api.get(path)

    assert_an_answer(response, 404)
