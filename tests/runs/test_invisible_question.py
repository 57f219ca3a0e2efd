"""A question that shows nothing to a reader — zero-width characters, the BOM, bidi marks, combining marks with
nothing to sit on, the whitespace of other scripts, Hangul fillers — is refused like an empty one: the API answers
400 ``invalid_input`` "question must not be empty" and stores nothing; ``ask`` exits 1 with the same sentence.
Before, ``normalize`` stripped only what ``\\s`` matches, so "\\u200b\\u200d" or "\\ufeff" became a run."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import CommandError, call_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from legaltext.text import has_visible_text
from runs.models import Run, StageEvent
from tests.conftest import post_run

# Characters that draw nothing: Unicode's whitespace (Z*: U+3000, U+1680, U+2000–U+200A, U+2028…), control and
# format characters (zero-width space and joiners, bidi marks, the BOM, tags), combining marks; and the
# default-ignorable letters and symbols (Hangul fillers, Braille blank, variation selectors). NUL has its own
# sentence (tests/security) and a lone surrogate is not text.
INVISIBLE_CHARS = st.characters(categories=["Zs", "Zl", "Zp", "Cc", "Cf", "Mn", "Me", "Mc"],
                                exclude_characters="\x00") | st.sampled_from(
    "\u115f\u1160\u3164\uffa0\u2800\u034f\ufe0f\U000e0041\u200b\u200d\ufeff\u00ad")
INVISIBLE = st.text(INVISIBLE_CHARS, min_size=1, max_size=40)
KNOWN = ["\u200b\u200b\u200d", "\ufeff", "\u0301\u0301", "\u3000\u2003\u1680", "\u202e\u2066\u2069",
         "\u3164\u3164", "\u2800", " \u200b \u0300 "]
VISIBLE = st.characters(categories=["L", "N", "P", "S"]).filter(has_visible_text)
PROPERTIES = settings(max_examples=60, deadline=None, derandomize=True,
                      suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def no_throttle(settings: Any) -> None:
    settings.API_THROTTLE_RATE = "100000/minute"  # the examples are a burst from one key


@given(INVISIBLE)
def test_text_of_invisible_characters_shows_nothing(text: str) -> None:
    assert not has_visible_text(text)


@given(INVISIBLE, VISIBLE, INVISIBLE)
def test_one_visible_character_among_invisible_ones_is_text(before: str, visible: str, after: str) -> None:
    assert has_visible_text(before + visible + after)


@pytest.mark.django_db
@PROPERTIES
@given(question=INVISIBLE | st.sampled_from(KNOWN))
def test_an_invisible_question_is_a_400_like_an_empty_one_and_stores_nothing(api: Any, specialist: Any,
                                                                             question: str) -> None:
    response = post_run(api, question=question, specialist=specialist.slug)

    assert response.status_code == 400, (question, response.content)
    assert response.json()["code"] == "invalid_input"
    assert "question must not be empty" in response.json()["detail"]
    assert Run.objects.count() == 0 and StageEvent.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("question", KNOWN)
def test_ask_refuses_an_invisible_question_with_the_sentence_and_exit_1(specialist: Any, question: str) -> None:
    with pytest.raises(CommandError, match="question must not be empty") as refused:
        call_command("ask", question, "--specialist", specialist.slug)

    assert refused.value.returncode == 1  # what manage.py exits with
    assert Run.objects.count() == 0
