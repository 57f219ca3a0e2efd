"""Lemmas of the meaningful words (legaltext/text.py): what BM25 indexes and what a question searches with."""

from __future__ import annotations

import pytest

from legaltext.text import content_lemmas, lemma


@pytest.mark.parametrize(("form", "drifted"), [("його", "йога"), ("мене", "мен"), ("мені", "мен"),
                                               ("тому", "том"), ("бути", "бута")])
def test_a_pronoun_the_analyser_reads_as_another_word_is_not_a_content_word(form: str, drifted: str) -> None:
    # the analyser's first reading of the form is a noun («його» → «йога»): as a lemma it would pass the stopwords
    assert lemma(form) == drifted
    assert drifted not in content_lemmas(f"Чи можуть {form} звільнити?")


def test_a_first_person_story_keeps_its_legal_words_only() -> None:
    assert content_lemmas("Мене звільнили, а його права мені ніхто не пояснив") == [
        "звільнити", "право", "ніхто", "пояснити"]


@pytest.mark.parametrize(("typed", "spelled"), [
    ("зобовязаний", "зобов'язаний"), ("обовязково", "обов'язково"), ("компютер", "комп'ютер"), ("пять", "п'ять"),
])
def test_a_word_typed_without_its_apostrophe_meets_the_statutes_spelling(typed: str, spelled: str) -> None:
    assert lemma(typed) == lemma(spelled)


@pytest.mark.parametrize("word", ["бюро", "рюкзак", "пюре"])
def test_a_known_word_with_a_labial_before_ya_keeps_its_spelling(word: str) -> None:
    assert "'" not in lemma(word)
