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
