"""A lay idea the statute words two ways. The thesaurus gives «інтимні фото» as «поширення конфіденційної
інформації про особу» (КК ст. 182's text) | «недоторканність приватного життя» (its heading): the offline writer
counts the idea in a sentence that holds either wording whole (legaltext/lay_terms.py ALTERNATIVE). Joined into
one phrase, no sentence of the corpus held it and the answer led with the petitions law."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from legaltext import lay_terms
from legaltext.sentences import split_sentences
from llm.providers import offline

QUESTION = "Мене шантажують інтимними фото. Куди звертатися?"
PRIVACY = ("КК ст. 182", "1. Незаконне збирання, зберігання, використання, знищення, поширення конфіденційної "
           "інформації про особу або незаконна зміна такої інформації, крім випадків, передбачених іншими статтями "
           "цього Кодексу, - караються штрафом від п'ятисот до однієї тисячі неоподатковуваних мінімумів доходів "
           "громадян.")
# what retrieval ranked above it: a word or two of the same things
PETITIONS = ("Закон «Про звернення громадян» ст. 10", "Не допускається розголошення одержаних із звернень відомостей "
             "про особисте життя громадян без їх згоди.")
THREAT = ("ЦК ст. 1164", "1. У разі неусунення загрози життю, здоров'ю, майну фізичної особи заінтересована особа має "
          "право вимагати заборони діяльності, яка створює загрозу.")


def word_scores(*sources: tuple[str, str]) -> dict[str, float]:
    """Each source's first sentence scored on words alone."""
    sentences = [split_sentences(text)[0] for _, text in sources]
    scorer = offline._Scorer(QUESTION, sentences)
    return {ref: scorer.score(i, s) for i, ((ref, _), s) in enumerate(zip(sources, sentences, strict=True))}


@pytest.fixture
def one_phrase(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The thesaurus read with its wordings joined into one phrase each, as before «A | B» existed."""
    monkeypatch.setattr(lay_terms, "ALTERNATIVE", "\x00")
    held = dict(lay_terms._held)
    lay_terms._held.clear()
    lay_terms._by_lemma.cache_clear()
    yield
    lay_terms._held.clear()
    lay_terms._held.update(held)
    lay_terms._by_lemma.cache_clear()


def test_a_sentence_holding_one_wording_whole_answers_the_idea() -> None:
    # when
    scores = word_scores(PETITIONS, THREAT, PRIVACY)
    # then КК ст. 182 holds the idea; the sentences sharing a word or two of it do not
    assert scores["КК ст. 182"] > 0
    assert max(v for k, v in scores.items() if k != "КК ст. 182") < scores["КК ст. 182"]


@pytest.mark.usefixtures("one_phrase")
def test_joined_into_one_phrase_no_sentence_holds_the_idea() -> None:
    # what the wordings change: the text holds only the first of them
    assert word_scores(PETITIONS, THREAT, PRIVACY)["КК ст. 182"] == 0
