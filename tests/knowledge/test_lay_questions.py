"""The questions people ask that an article answers (knowledge/ingest/lay_questions.py): read from the shipped file
with a sentence for every bad line, stored beside the article's sentences, and what makes a lay question meet its
article in U4's meaning search."""

from __future__ import annotations

import gzip
import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from engine.ports import QdrantSearchPort
from knowledge import index
from knowledge.embed_cache import SENTENCES, VectorCache
from knowledge.embeddings import default_embedder
from knowledge.ingest.corpus import article_sentences, read_articles
from knowledge.ingest.jsonl import IngestError
from knowledge.ingest.laws import laws_ingest
from knowledge.ingest.lay_questions import lay_questions, questions_for, questions_of, read_lay_questions
from knowledge.ingest.shipped import CORPUS_DIR
from knowledge.lexical import questions_vector
from legaltext.chunking import Article
from pipeline.stages.retrieval import first_chunk_key

DEMO = Path(__file__).resolve().parents[2] / "knowledge" / "demo_corpus" / "demo_articles.jsonl"
ASKED = "Мене хочуть вигнати з роботи, поки я хворію і сиджу вдома з довідкою від лікаря. Це законно?"


def write_lines(path: Path, lines: list[str]) -> Path:
    text = "\n".join(lines) + "\n"
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def record(nreg: str, article: str, *questions: str) -> str:
    return json.dumps({"act_nreg": nreg, "article": article, "questions": list(questions)}, ensure_ascii=False)


@pytest.mark.parametrize("name", ["lay.jsonl", "lay.jsonl.gz"])
def test_the_questions_are_read_by_article_plain_or_gzipped_and_bounded(tmp_path: Path, name: str) -> None:
    path = write_lines(tmp_path / name, [record("254к/96-ВР", "44", "Чи можна страйкувати?", "Чи можна страйкувати?",
                                                "Хто оголошує страйк?", "Чи звільнять за страйк?"), ""])
    got = read_lay_questions(path, per_article=2)
    # the act's number case-folded; a repeated question once; at most per_article
    assert got == {("254к/96-вр", "44"): ("Чи можна страйкувати?", "Хто оголошує страйк?")}
    assert questions_of(got, "254к/96-ВР", "44") == got[("254к/96-вр", "44")]
    assert questions_of(got, "254к/96-ВР", "45") == ()


def test_questions_go_to_the_record_the_number_means_not_a_stub_or_a_second_text() -> None:
    asked = {("80731-10", "163"): ("Який штраф за емісію акцій без реєстрації?",)}

    def article(text: str, occurrence: int, primary: bool) -> Article:
        return Article(act_nreg="80731-10", act_title="КУпАП", act_abbrev=None, article="163", heading=None,
                       text=text, occurrence=occurrence, primary=primary)
    assert questions_for(asked, article("Статтю 163 виключено", 1, False)) == ()
    assert questions_for(asked, article("Порушення порядку емісії цінних паперів …", 2, True)) == asked[
        ("80731-10", "163")]


@pytest.mark.parametrize(("line", "error"), [
    ("{not json", "lay.jsonl:2: expected"),
    ('{"act_nreg": "322-08", "questions": ["Чи можна?"]}', "lay.jsonl:2: expected"),
    ('{"act_nreg": "322-08", "article": "40", "questions": 7}', "lay.jsonl:2: expected"),
    (record("322-08", "40", "Ще раз?"), "lay.jsonl:2: 322-08 ст. 40 is given twice"),
])
def test_a_bad_line_is_the_operators_error_naming_it(tmp_path: Path, line: str, error: str) -> None:
    path = write_lines(tmp_path / "lay.jsonl", [record("322-08", "40", "Чи можуть звільнити на лікарняному?"), line])
    with pytest.raises(IngestError, match=error):
        read_lay_questions(path, per_article=3)


def test_no_file_or_no_questions_an_article_reads_nothing(tmp_path: Path) -> None:
    assert lay_questions("", per_article=3) == {}
    assert lay_questions(str(tmp_path / "absent.jsonl"), per_article=0) == {}
    with pytest.raises(IngestError, match="file not found"):
        lay_questions(str(tmp_path / "absent.jsonl"), per_article=3)


def test_an_articles_questions_follow_its_own_sentences() -> None:
    article = Article(act_nreg="322-08", act_title="Кодекс законів про працю України", act_abbrev="КЗпП",
                      article="40", heading=None, text="Перше речення статті. Друге речення статті.", url="")
    said = article_sentences(article, max_sentences=24, max_chars=400, asked=("Чи можна?", "Перше речення статті."))
    assert said == ["Перше речення статті.", "Друге речення статті.", "Чи можна?"]
    assert article_sentences(article, max_sentences=0, max_chars=400, asked=("Чи можна?",)) == []


def _core_articles() -> dict[tuple[str, str], dict[str, Any]]:
    """The units ingest indexes (an act's final provisions among them, «ПП»), as {"article_heading": …}."""
    return {(a.act_nreg.lower(), a.article): {"article_heading": a.heading}
            for a in read_articles(CORPUS_DIR / "core_articles.jsonl.gz")}


def test_the_shipped_questions_name_articles_of_the_core_corpus() -> None:
    shipped = read_lay_questions(CORPUS_DIR / "lay_questions.jsonl.gz", per_article=settings.LAY_QUESTIONS_PER_ARTICLE)
    assert len(shipped) > 1000 and all(1 <= len(q) <= settings.LAY_QUESTIONS_PER_ARTICLE for q in shipped.values())
    assert set(shipped) <= set(_core_articles())


def _labelled(questions: dict[tuple[str, str], tuple[str, ...]]) -> list[str]:
    """The questions that name an article's number or hold its heading (of three words or more)."""
    articles = _core_articles()
    return [q for key, qs in questions.items() for q in qs
            if re.search(r"\bстатт\w*\s+\d|\bст\.\s*\d", q.lower())
            or (len(head := (articles[key].get("article_heading") or "").lower().strip(" .").split()) >= 3
                and " ".join(head) in q.lower())]


def test_the_shipped_questions_ask_without_the_statutes_labels() -> None:
    """What they are for: a user's words, never the article's number or its heading turned into a question (a
    heading-shaped question would meet heading-shaped queries, the failure issue 16 was filed for)."""
    shipped = read_lay_questions(CORPUS_DIR / "lay_questions.jsonl.gz", per_article=settings.LAY_QUESTIONS_PER_ARTICLE)
    assert _labelled(shipped) == []
    assert all(q.rstrip().endswith("?") for qs in shipped.values() for q in qs)


def test_the_facet_questions_kept_beside_are_new_and_well_formed() -> None:
    """``lay_questions_facets.jsonl.gz`` (session 36, measured and not loaded: knowledge/corpus/README.md): more
    questions for the long articles' other parts. Kept to the shipped file's rules, so a later session can load them
    (merged into LAY_QUESTIONS_FILE) as they are: core articles that have shipped questions, none repeated, no label."""
    facets = read_lay_questions(CORPUS_DIR / "lay_questions_facets.jsonl.gz", per_article=3)
    shipped = read_lay_questions(CORPUS_DIR / "lay_questions.jsonl.gz", per_article=settings.LAY_QUESTIONS_PER_ARTICLE)
    assert len(facets) > 800 and set(facets) <= set(shipped)
    assert [q for key, qs in facets.items() for q in qs if q in shipped[key]] == []
    assert _labelled(facets) == []
    assert all(q.rstrip().endswith("?") for qs in facets.values() for q in qs)


def test_every_stored_question_has_its_vector_shipped() -> None:
    """make knowledge embeds nothing: each question ingest stores (at the default cap) is in the core's sentence
    cache, and in the demo corpus's for the demo's articles (a question added without export_embeddings fails)."""
    shipped = read_lay_questions(CORPUS_DIR / "lay_questions.jsonl.gz", per_article=settings.LAY_QUESTIONS_PER_ARTICLE)
    model = default_embedder().name
    core = VectorCache(model, [CORPUS_DIR], SENTENCES)
    assert [q for qs in shipped.values() for q in qs if core.get(q) is None] == []
    demo = {(rec["act_nreg"].lower(), str(rec["article"])) for rec in map(json.loads, DEMO.open(encoding="utf-8"))}
    in_demo = VectorCache(model, [DEMO.parent], SENTENCES)
    assert [q for key in demo & set(shipped) for q in shipped[key] if in_demo.get(q) is None] == []


@pytest.fixture
def two_collections(settings: Any, db: Any, tmp_path: Path) -> Any:
    """КЗпП ст. 38 and 40 of the demo corpus ingested twice: with a lay question for ст. 40, and without any."""
    corpus = tmp_path / "two.jsonl"
    corpus.write_text("".join(line for line in DEMO.open(encoding="utf-8")
                              if '"322-08"' in line and json.loads(line)["article"] in ("38", "40")),
                      encoding="utf-8")
    lay = write_lines(tmp_path / "lay.jsonl", [record("322-08", "40", ASKED)])
    names = {"with": "lldbi_lay_test", "without": "lldbi_nolay_test"}
    for kind, name in names.items():
        settings.LLDBI_COLLECTION, settings.LLDBI_TERMS_COLLECTION = name, f"{name}_terms"
        settings.LAY_QUESTIONS_FILE = str(lay) if kind == "with" else ""
        laws_ingest(path=corpus, show_progress=False, update_catalog=False)
    yield names
    for name in names.values():
        for collection in (name, f"{name}_terms"):
            if index.get_client().collection_exists(collection):
                index.get_client().delete_collection(collection)


def test_a_lay_question_stored_with_its_article_brings_the_article_close_to_that_question(
        two_collections: dict[str, str]) -> None:
    scores = {}
    for kind, name in two_collections.items():
        port = QdrantSearchPort(collection=name)
        found = port.meaning_search(ASKED, [], 2, [])
        first = {p["article"]: first_chunk_key(p["chunk_key"]) for p, _ in found}
        scores[kind] = port.meaning(ASKED, [first["40"]])[first["40"]]
        if kind == "with":  # the question meets its own words, stored as ст. 40's last "sentence"
            assert found[0][0]["article"] == "40"
    assert scores["with"] > scores["without"] + 0.03


def test_the_lay_questions_are_stored_alone_too_and_both_backends_read_them_alike(
        two_collections: dict[str, str]) -> None:
    """U4's lay-question rerank reads index.QUESTIONS: the article's questions only, none of its sentences."""
    port = QdrantSearchPort(collection=two_collections["with"], backend="edge")
    first = {p["article"]: first_chunk_key(p["chunk_key"]) for p, _ in port.meaning_search(ASKED, [], 2, [])}
    got = port.questions(ASKED, list(first.values()))
    assert list(got) == [first["40"]]  # ст. 38 has no question: absent, though its sentences are stored
    assert got[first["40"]] > 0.9  # the user asked the stored question itself
    assert got[first["40"]] < port.meaning(ASKED, [first["40"]])[first["40"]] + 1e-3  # one of the sentences
    server = QdrantSearchPort(collection=two_collections["with"], backend="qdrant").questions(
        ASKED, list(first.values()))
    assert server.keys() == got.keys() and abs(server[first["40"]] - got[first["40"]]) < 2e-3
    without = QdrantSearchPort(collection=two_collections["without"], backend="edge")
    assert without.questions(ASKED, [first["40"]]) == {}


def test_the_lay_questions_words_are_searched_by_bm25_in_both_backends(two_collections: dict[str, str]) -> None:
    """index.QUESTION_WORDS: words a user types that the statute never uses («вигнати», «хворію», «довідкою») find
    the article whose lay question holds them; the article's own text is not in that field."""
    asked = "Чи можуть вигнати, коли хворію з довідкою?"
    port = QdrantSearchPort(collection=two_collections["with"], backend="edge")
    found = port.question_words(asked, [], 5)
    assert [p["article"] for p, _ in found] == ["40"] and found[0][0]["chunk_key"].endswith("#c0")
    server = QdrantSearchPort(collection=two_collections["with"], backend="qdrant").question_words(asked, [], 5)
    assert [(p["chunk_key"], round(s, 4)) for p, s in server] == [(p["chunk_key"], round(s, 4)) for p, s in found]
    assert port.question_words("розірвання трудового договору", [], 5) == []  # the statute's words are not there
    assert QdrantSearchPort(collection=two_collections["without"], backend="edge").question_words(asked, [], 5) == []


@pytest.mark.parametrize("command", ["ingest_demo", "ingest_laws"])
def test_a_bad_lay_questions_file_stops_an_ingest_with_a_sentence_before_it_writes(
        settings: Any, db: Any, tmp_path: Path, command: str) -> None:
    settings.LLDBI_COLLECTION, settings.LLDBI_TERMS_COLLECTION = "lldbi_badlay_test", "lldbi_badlay_test_terms"
    settings.LAY_QUESTIONS_FILE = str(write_lines(tmp_path / "lay.jsonl", ["{not json"]))
    args = [str(DEMO)] if command == "ingest_laws" else []
    with pytest.raises(CommandError, match=r"lay\.jsonl:1: expected"):
        call_command(command, *args, stdout=StringIO())
    assert not index.get_client().collection_exists("lldbi_badlay_test")


def test_an_articles_question_words_are_bm25_weights_of_its_questions_joined() -> None:
    assert questions_vector([]) is None
    one, two = questions_vector(["Чи можна страйкувати?"]), questions_vector(["Чи можна страйкувати?"] * 2)
    assert one is not None and two is not None and one.indices == two.indices
    assert all(b > a for a, b in zip(one.values, two.values, strict=True))  # a word asked twice weighs more


def test_a_collection_from_before_the_lay_question_fields_is_ingested_and_searched_without_them(
        settings: Any, db: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """An upgrade re-runs ingest over a collection that keeps its schema: the operator is told how to get the
    fields, and U4 ranks without them instead of failing."""
    from qdrant_client import models

    name = "lldbi_oldlay_test"
    settings.LLDBI_COLLECTION, settings.LLDBI_TERMS_COLLECTION = name, f"{name}_terms"
    corpus = tmp_path / "one.jsonl"
    corpus.write_text(next(line for line in DEMO.open(encoding="utf-8")
                           if '"322-08"' in line and json.loads(line)["article"] == "40"), encoding="utf-8")
    settings.LAY_QUESTIONS_FILE = str(write_lines(tmp_path / "lay.jsonl", [record("322-08", "40", ASKED)]))
    client = index.get_client()
    dim = default_embedder().dim
    multi = models.MultiVectorConfig(comparator=models.MultiVectorComparator.MAX_SIM)
    client.create_collection(name, vectors_config={
        index.DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE),
        index.SENTENCES: models.VectorParams(size=dim, distance=models.Distance.COSINE, multivector_config=multi)},
        sparse_vectors_config={index.LEXICAL: models.SparseVectorParams(modifier=models.Modifier.IDF)})
    try:
        with caplog.at_level("WARNING", logger="knowledge.ingest.laws"):
            laws_ingest(path=corpus, show_progress=False, update_catalog=False)
        assert any("predates the lay questions' own fields" in r.getMessage() for r in caplog.records)
        port = QdrantSearchPort(collection=name, backend="edge")
        first = [p["chunk_key"] for p, _ in port.meaning_search(ASKED, [], 1, [])]
        assert first and port.questions(ASKED, first) == {} and port.question_words(ASKED, [], 5) == []
    finally:
        for collection in (name, f"{name}_terms"):
            if client.collection_exists(collection):
                client.delete_collection(collection)
