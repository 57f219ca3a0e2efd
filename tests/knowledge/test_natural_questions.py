"""Questions as people ask them, answered end to end over the whole demo corpus (577 articles: the Labour Code, the
Constitution, the laws on leave and on pay, the opening articles of four procedural codes) — enough competing law
for the wrong article to win, as it did: the strike question led with ЦПК ст. 4 and the sick-leave one with КЗпП
ст. 47, both labelled ``strong``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from knowledge.ingest.catalog import catalog_load
from knowledge.ingest.laws import laws_ingest
from knowledge.models import Act
from tests.conftest import post_run
from tests.support.corpus import DEMO_DIR

DEMO_COLLECTION = {"LLDBI_COLLECTION": "demo_full", "LLDBI_TERMS_COLLECTION": "demo_full_terms"}


@pytest.fixture(scope="session")
def demo_index(django_db_blocker: Any) -> list[str]:
    """The whole demo corpus in its own collection (the shared test slice is far smaller), embedded once."""
    with override_settings(**DEMO_COLLECTION), django_db_blocker.unblock():
        laws_ingest(path=DEMO_DIR / "demo_articles.jsonl", show_progress=False, update_catalog=False)
    return ["322-08", "254к/96-ВР", "108/95-ВР", "504/96-ВР", "1618-15", "4651-17", "2747-15", "1798-12"]


@pytest.fixture
def demo_catalog(db: Any, demo_index: list[str]) -> Iterator[None]:
    catalog_load(acts_path=DEMO_DIR / "catalog_acts.jsonl", aliases_path=DEMO_DIR / "act_aliases.jsonl")
    Act.objects.filter(nreg__in=demo_index).update(indexed=True)
    with override_settings(**DEMO_COLLECTION):
        yield


def ask(api: APIClient, capture: Any, question: str) -> dict[str, Any]:
    with capture(execute=True):
        created = post_run(api, question=question, specialist="labour")
    assert created.status_code == 202, created.content
    run: dict[str, Any] = api.get(f"/api/v1/runs/{created.json()['id']}").json()
    assert run["status"] == "done", run
    return run


@pytest.mark.django_db
@pytest.mark.parametrize(("question", "gold"), [
    ("Хто має право на страйк для захисту своїх економічних і соціальних інтересів?", ("254к/96-ВР", "44")),
    ("Чи може роботодавець звільнити мене, поки я на лікарняному?", ("322-08", "40")),
], ids=["strike-constitution-44", "sick-leave-kzpp-40"])
def test_a_lay_question_is_answered_first_from_the_article_that_answers_it(
        api: APIClient, specialist: Any, demo_catalog: None, django_capture_on_commit_callbacks: Any,
        question: str, gold: tuple[str, str]) -> None:
    # when
    run = ask(api, django_capture_on_commit_callbacks, question)
    # then the first citation is the gold article, and the «Коротко» line quotes it
    first = run["answer"]["citations"][0]
    assert (first["act_nreg"], first["article"]) == gold, run["answer"]["text"]
    lead = run["answer"]["text"].split("\n")[0]
    assert lead.startswith("Коротко:") and lead.endswith(f"({first['article_ref']}).")


@pytest.mark.django_db
def test_the_sick_leave_answer_quotes_the_prohibition_itself(api: APIClient, specialist: Any, demo_catalog: None,
                                                           django_capture_on_commit_callbacks: Any) -> None:
    run = ask(api, django_capture_on_commit_callbacks, "Чи може роботодавець звільнити мене, поки я на лікарняному?")
    lead = run["answer"]["text"].split("\n")[0]
    assert "Не допускається звільнення" in lead and "тимчасової непрацездатності" in lead


@pytest.mark.django_db
@pytest.mark.parametrize("question", ["SELECT * FROM runs;", "hello world", "?", "lorem ipsum dolor sit amet",
                                      "Що робити?", "Добрий день! Чи можна?"])
def test_a_question_the_law_neither_words_nor_means_is_told_so_and_quotes_nothing(
        api: APIClient, specialist: Any, demo_catalog: None, django_capture_on_commit_callbacks: Any,
        question: str) -> None:
    # when a user sends something no article speaks to (the dense list still returns its nearest articles)
    run = ask(api, django_capture_on_commit_callbacks, question)
    # then the answer quotes no law, says nothing was found, asks for the situation, and claims no support
    answer = run["answer"]
    assert answer["citations"] == [] and run["support_level"] == "none", run
    assert answer["text"].startswith("У базі знань не знайдено норм") and "Опишіть" in answer["text"]


@pytest.mark.django_db
def test_a_legal_question_in_russian_is_still_answered_from_its_article(
        api: APIClient, specialist: Any, demo_catalog: None, django_capture_on_commit_callbacks: Any) -> None:
    # when no word of the question stands in the law, but its meaning is the leave articles'
    run = ask(api, django_capture_on_commit_callbacks, "Сколько дней длится ежегодный основной отпуск?")
    # then the answer still leads with them
    first = run["answer"]["citations"][0]
    assert (first["act_nreg"], first["article"]) in {("322-08", "75"), ("504/96-ВР", "6")}, run["answer"]["text"]


@pytest.mark.django_db
def test_a_follow_up_of_frame_words_leans_on_the_previous_question(
        api: APIClient, specialist: Any, demo_catalog: None, django_capture_on_commit_callbacks: Any) -> None:
    # given a conversation that asked about annual leave
    with django_capture_on_commit_callbacks(execute=True):
        first = post_run(api, question="Скільки днів щорічної відпустки мені належить?", specialist="labour",
                         user_ref="u1", conversation_id="c-leave")
    assert first.status_code == 202, first.content
    # when the next turn holds only the words that frame a question
    with django_capture_on_commit_callbacks(execute=True):
        later = post_run(api, question="А що тоді робити?", specialist="labour", user_ref="u1",
                         conversation_id="c-leave")
    run = api.get(f"/api/v1/runs/{later.json()['id']}").json()
    # then it is searched with the previous question and answered from the law, not told it is beyond it
    assert run["status"] == "done" and run["support_level"] != "none", run
    assert run["answer"]["citations"], run["answer"]["text"]
