"""The sentence cache holds each sentence as the offline writer weighs it, so a run looks vectors up instead of
embedding them again (U4's own vectors read the article's raw text; the evidence shows chunks, normalised)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from knowledge.ingest.corpus import article_sentences, evidence_sentences
from legaltext.chunking import Article, split_text
from llm.providers import offline

CHUNK_CHARS, OVERLAP = 1200, 150
ITEMS = "\n".join(f"{i}) суб’єкта звернення номер {i} з правом на відповідь;" for i in range(1, 30))
ARTICLE = Article(
    act_nreg="1-01", act_title="Про звернення громадян", act_abbrev=None, article="7",
    heading="Розгляд звернень. Строки розгляду",
    text=("1. Звернення суб’єкта розглядається  у строк не більше одного місяця.\n"
          "2. Не розглядаються звернення:\n" + ITEMS + "\n{Статтю доповнено частиною третьою згідно із Законом}\n"
          "3. Зв’язок із заявником підтримується письмово."))


@pytest.fixture
def weighed() -> Iterator[list[list[str]]]:
    calls: list[list[str]] = []

    def recording(question: str, sentences: list[str]) -> Sequence[float]:
        calls.append(list(sentences))
        return [0.5] * len(sentences)

    wired = offline._similarity  # the engine's wiring, put back for the tests after this one
    offline.set_sentence_similarity(recording)
    yield calls
    offline.set_sentence_similarity(wired)


def test_every_sentence_the_writer_weighs_in_a_law_block_is_a_stored_form(weighed: list[list[str]]) -> None:
    forms = set(evidence_sentences(ARTICLE, max_chars=400, chunk_chars=CHUNK_CHARS, overlap_chars=OVERLAP,
                                   max_chunks=64))
    chunks = split_text(ARTICLE.text, max_chars=CHUNK_CHARS, overlap_chars=OVERLAP)
    assert len(chunks) > 1  # a long article: its lines are joined within a chunk
    for chunk in chunks:  # a law block as U9 renders it: the heading over the chunk's text
        offline._candidates([("Закон «Про звернення громадян» ст. 7", f"{ARTICLE.heading}\n{chunk}")],
                            "Скільки розглядають звернення?", None, quotable=lambda ref, s: True)
    assert weighed and all(set(call) <= forms for call in weighed)
    # ingest's own sentences keep the text's apostrophes and lines; the writer's forms are what differ
    own = set(article_sentences(ARTICLE, max_sentences=24, max_chars=400))
    assert any("суб'єкта" in s for s in forms - own) and not any("суб'єкта" in s for s in own)
