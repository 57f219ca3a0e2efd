"""The offline writer weighs a sentence's meaning beside its words (llm/providers/offline.py ``_with_meaning``): a
lay question that shares no word with the sentence answering it still leads with that sentence. The model is the
real multilingual-e5 the retrieval uses, wired by engine/apps.py."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest
from django.conf import settings

from assemble.prompt import SourceBlock, legacy_messages
from knowledge.embed_cache import SENTENCES, VectorCache, sentence_similarity
from knowledge.embeddings import QUERY_MAX_CHARS, SentenceVectors, default_embedder
from legaltext.sentences import meaning_sentences
from llm.providers import offline
from pipeline.contracts import SpecialistProfile
from tests.support.corpus import DEMO_DIR

SPECIALIST = SpecialistProfile(slug="demo", soul="Ти — уважний юрист.")
# Rank 0 is a land lease, rank 1 the battery article: neither shares a word with the question.
LEASE = SourceBlock("ЗК ст. 93", "z93", None, "Договір оренди землі укладається у письмовій формі на визначений строк.")
BATTERY = SourceBlock("КК ст. 125", "k125", None,
                      "Умисне легке тілесне ушкодження карається штрафом або громадськими роботами.")
QUESTION = "Хлопець у барі розбив мені носа. Що йому буде?"


@pytest.fixture
def without_meaning() -> Iterator[None]:
    wired = offline._similarity
    offline.set_sentence_similarity(None)
    yield
    offline.set_sentence_similarity(wired)


def lead(answer: str) -> str:
    return next(line for line in answer.splitlines() if line.startswith("Коротко: "))


def test_the_engine_wires_the_retrieval_model_into_the_writer() -> None:
    assert offline._similarity is sentence_similarity


def test_a_lay_question_leads_with_the_sentence_that_answers_it() -> None:
    # when
    answer = offline.compose_answer(legacy_messages(profile=SPECIALIST, blocks=[LEASE, BATTERY], question=QUESTION))
    # then the battery article leads, though it is ranked second and shares no word with the question
    assert "(КК ст. 125)" in lead(answer), answer


def test_without_the_model_words_and_rank_choose(without_meaning: None) -> None:
    answer = offline.compose_answer(legacy_messages(profile=SPECIALIST, blocks=[LEASE, BATTERY], question=QUESTION))
    assert "(ЗК ст. 93)" in lead(answer), answer


def test_meaning_is_added_to_the_word_scores_scaled_to_the_best(without_meaning: None) -> None:
    # given cosines whose median is 0.5: the closest sentence gets the whole weight, the median and below none
    offline.set_sentence_similarity(lambda question, sentences: [0.9, 0.5, 0.1])
    # when
    scores = offline._with_meaning("питання", ["a", "b", "c"], [2.0, 4.0, 0.0])
    # then
    assert scores == pytest.approx([0.5 + offline.MEANING_WEIGHT, 1.0, 0.0])


def test_a_failing_model_leaves_the_word_scores(without_meaning: None, caplog: pytest.LogCaptureFixture) -> None:
    def broken(question: str, sentences: list[str]) -> list[float]:
        raise RuntimeError("no model")

    offline.set_sentence_similarity(broken)
    assert offline._with_meaning("питання", ["a", "b"], [1.0, 0.0]) == [1.0, 0.0]
    assert "sentence meaning unavailable" in caplog.text


def test_only_the_first_sentences_are_embedded_and_cut(without_meaning: None) -> None:
    seen: list[list[str]] = []

    def similarity(question: str, sentences: list[str]) -> list[float]:
        seen.append(sentences)
        return [1.0 - i / len(sentences) for i in range(len(sentences))]

    offline.set_sentence_similarity(similarity)
    # given more sentences than are embedded, each longer than the part embedded
    n = offline.MEANING_MAX_SENTENCES + 5
    sentences = [f"речення {i} " + "слово " * offline.MEANING_CHARS for i in range(n)]
    # when
    scores = offline._with_meaning("питання", sentences, [0.0] * n)
    # then the first ones, in the evidence's order, cut to MEANING_CHARS; the rest keep their word score
    assert seen == [[s[:offline.MEANING_CHARS] for s in sentences[:offline.MEANING_MAX_SENTENCES]]]
    assert scores[0] == pytest.approx(offline.MEANING_WEIGHT) and scores[-5:] == [0.0] * 5


class Counting:
    """The real model, recording the passages it embeds."""

    def __init__(self) -> None:
        self._model = default_embedder()
        self.name, self.dim = self._model.name, self._model.dim
        self.embedded: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.embedded.extend(texts)
        return self._model.embed(texts)

    def embed_query(self, texts: list[str]) -> np.ndarray:
        return self._model.embed_query(texts)


def test_sentence_vectors_are_embedded_once_and_the_oldest_dropped() -> None:
    # given a cache of two over the real model, counting what it embeds
    model = Counting()
    vectors = SentenceVectors(model, size=2)
    first = vectors.similarity(QUESTION, [BATTERY.text, LEASE.text])
    # when the same sentences come again, then a third
    again = vectors.similarity(QUESTION, [LEASE.text, BATTERY.text])
    vectors.similarity(QUESTION, ["Третє речення про інше."])
    vectors.similarity(QUESTION, [BATTERY.text, LEASE.text])
    # then each was embedded once until it was dropped as the least recently used (the lease, used before the
    # battery in the second call)
    assert model.embedded == [BATTERY.text, LEASE.text, "Третє речення про інше.", LEASE.text]
    assert again == pytest.approx(first[::-1])
    assert first[0] > first[1]  # the battery sentence is closer to the question than the lease


def test_a_sentence_vector_stored_at_ingest_is_looked_up_not_embedded() -> None:
    # given a model that records what it embeds, and the battery sentence's vector known from the shipped cache
    model = Counting()
    stored = {BATTERY.text: default_embedder().embed([BATTERY.text])[0]}
    vectors = SentenceVectors(model, known=stored.get)
    # when both sentences are weighed
    cosines = vectors.similarity(QUESTION, [BATTERY.text, LEASE.text])
    # then only the lease sentence went through the model, and the stored vector counted as its own would
    assert model.embedded == [LEASE.text]
    fresh = SentenceVectors(default_embedder()).similarity(QUESTION, [BATTERY.text, LEASE.text])
    assert cosines == pytest.approx(fresh, abs=1e-5)


def test_the_writer_finds_the_shipped_sentence_vectors() -> None:
    # the first sentence of КЗпП ст. 40 (the demo corpus), split as ingest and the writer split it
    text = next(json.loads(line)["text"] for line in (DEMO_DIR / "demo_articles.jsonl").open(encoding="utf-8")
                if json.loads(line)["act_nreg"] == "322-08" and json.loads(line)["article"] == "40")
    first = meaning_sentences(text, max_sentences=1, max_chars=settings.MEANING_SENTENCE_CHARS)[0]
    stored = VectorCache(default_embedder().name, settings.EMBEDDING_CACHE_DIRS, SENTENCES).get(first)
    assert stored is not None
    assert float(np.dot(stored, default_embedder().embed([first])[0])) > 0.999


def test_a_long_question_is_embedded_from_its_first_characters_in_bounded_time() -> None:
    # 4,000 emoji took ~9 s of CPU for each embedding of the question (U4 and the writer each embed it)
    model = default_embedder()
    long = "Чи можна звільнити працівника на лікарняному? " + "😀" * 4000
    assert np.allclose(model.embed_query([long]), model.embed_query([long[:QUERY_MAX_CHARS]]))
