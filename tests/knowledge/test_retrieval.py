"""U4 retrieval over the session's test slice (real model, real local Qdrant): the embedded engine's shards answer
as qdrant-client's local mode does, chunks are fused per article, and eval_retrieval scores U1–U4."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from engine.ports import QdrantSearchPort
from knowledge.embeddings import default_embedder
from knowledge.ingest.lay_questions import questions_of, stored_lay_questions
from knowledge.lexical import query_vector
from legaltext.lay_terms import concepts, with_statutory_words
from legaltext.sentences import meaning_sentences
from pipeline.contracts import SearchPlan, SearchStep
from pipeline.stages import retrieval
from pipeline.stages.retrieval import CHUNKS_PER_ARTICLE, article_key, retrieve
from tests.support.corpus import DEMO_DIR

QUERIES = ["Чи обов'язково укладати трудовий договір у письмовій формі?",
           "тривалість щорічної основної відпустки", "право на працю", "Форма трудового договору"]


@pytest.mark.parametrize("query", QUERIES)
def test_the_embedded_engine_ranks_as_qdrant_does(lldbi_index: dict[str, int], query: str) -> None:
    shard, qdrant = QdrantSearchPort(backend="edge"), QdrantSearchPort(backend="qdrant")
    for method in ("lexical", "heading", "dense"):
        got = getattr(shard, method)(query, [], 10)
        want = getattr(qdrant, method)(query, [], 10)
        assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=2e-3), method
        # equal scores (two codes with the same heading) may come in either order; the rest must match
        cut = want[-1][1] + 2e-3 if len(want) == 10 else float("-inf")
        assert {p["chunk_key"] for p, s in got if s > cut} == {p["chunk_key"] for p, s in want if s > cut}, method
    assert len(query_vector(query).indices) > 0


def test_the_meaning_search_scores_an_article_by_its_best_sentence_in_both_backends(
        lldbi_index: dict[str, int]) -> None:
    # given the first chunks of КЗпП ст. 24 (the written form of a labour contract), ст. 36 and ст. 40
    question = "Чи обов'язково укладати трудовий договір у письмовій формі?"
    keys = [f"322-08#st{a}#c0" for a in ("24", "36", "40")]
    want = QdrantSearchPort(backend="qdrant").meaning(question, keys)
    got = QdrantSearchPort(backend="edge").meaning(question, keys)
    # then both backends give each article its best sentence's cosine, and the article that answers is closest
    assert set(got) == set(want) == set(keys)
    assert [got[k] for k in keys] == pytest.approx([want[k] for k in keys], abs=1e-4)
    assert max(got, key=lambda k: got[k]) == "322-08#st24#c0"
    # a later chunk carries no sentence vectors; an unknown key is not an error
    assert QdrantSearchPort(backend="edge").meaning(question, ["322-08#st24#c1", "nope#st1#c0"]) == {}


@pytest.mark.parametrize("acts", [[], ["322-08"]])
def test_the_sentence_search_ranks_articles_by_their_best_sentence_in_both_backends(
        lldbi_index: dict[str, int], acts: list[str]) -> None:
    # given a lay question whose answer is one sentence of КЗпП ст. 24 (the labour contract's written form)
    question = "Чи обов'язково укладати трудовий договір у письмовій формі?"
    got = QdrantSearchPort(backend="edge").meaning_search(question, acts, 8)
    want = QdrantSearchPort(backend="qdrant").meaning_search(question, acts, 8)
    # then both backends rank the same first chunks by the same MaxSim, that article first, within the acts asked
    assert [p["chunk_key"] for p, _ in got] == [p["chunk_key"] for p, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-4)
    assert article_key(got[0][0]) == "322-08#24"
    assert all(p["chunk_key"].endswith("#c0") for p, _ in got)
    assert not acts or {p["act_nreg"].lower() for p, _ in got} == set(acts)


def test_past_the_scan_bound_the_sentences_are_searched_among_the_other_lists_articles(
        lldbi_index: dict[str, int], settings: Any) -> None:
    question = "Чи обов'язково укладати трудовий договір у письмовій формі?"
    edge, server = QdrantSearchPort(backend="edge"), QdrantSearchPort(backend="qdrant")
    whole = edge.meaning_search(question, [], 8)
    among = [p["chunk_key"] for p, _ in whole[5:]] + ["322-08#st36#c0"]
    # the scan is whole while the index is within the bound, whatever is listed
    assert [p["chunk_key"] for p, _ in edge.meaning_search(question, [], 8, among)] == [
        p["chunk_key"] for p, _ in whole]
    # given an index larger than the bound (here: any)
    settings.MEANING_SCAN_MAX_POINTS = 0
    edge, server = QdrantSearchPort(backend="edge"), QdrantSearchPort(backend="qdrant")
    got, want = edge.meaning_search(question, [], 8, among), server.meaning_search(question, [], 8, among)
    # then only the listed articles are scored, by the same MaxSim as the whole scan, in both backends
    assert {p["chunk_key"] for p, _ in got} == {p["chunk_key"] for p, _ in want} == set(among)
    scores = {p["chunk_key"]: s for p, s in whole}
    assert all(s == pytest.approx(scores[p["chunk_key"]], abs=1e-6) for p, s in got if p["chunk_key"] in scores)
    assert edge.meaning_search(question, [], 8, []) == []


def test_a_hybrid_step_fuses_the_sentences_list_with_the_two_others(lldbi_index: dict[str, int]) -> None:
    question = "Скільки днів відпустки мені дадуть за перший рік роботи?"
    plan = SearchPlan(steps=[SearchStep(kind="hybrid", query=question, limit=8)], channels=["lldbi_chunks"],
                      docs_probe=False)
    hits, _ = retrieve(plan, QdrantSearchPort(), attempt=1)
    channels = {article_key({"act_nreg": h.act_nreg, "article": h.article}): h.channel for h in hits.hits}
    # the 24 calendar days of annual leave, in the words of КЗпП ст. 75 and of the Law on Leave's ст. 6 alike, first
    # in all three lists
    assert article_key({"act_nreg": hits.hits[0].act_nreg, "article": hits.hits[0].article}) in {
        "322-08#75", "504/96-вр#6"}
    assert hits.hits[0].channel == "dense+lexical+meaning"
    assert sum("meaning" in c for c in channels.values()) >= 4


@pytest.mark.parametrize(("question", "has_words"), [("Скільки днів відпустки мені дадуть за перший рік роботи?", True),
                                                     ("SELECT * FROM runs;", False)])
def test_a_hybrid_step_traces_how_close_its_first_matches_came(lldbi_index: dict[str, int], question: str,
                                                              has_words: bool) -> None:
    port = QdrantSearchPort()
    plan = SearchPlan(steps=[SearchStep(kind="hybrid", query=question, limit=8)], channels=["lldbi_chunks"],
                      docs_probe=False)
    _, trace = retrieve(plan, port, attempt=1)
    step = trace.steps[0]
    # the dense list's first cosine and the BM25 list's first score, as the lists themselves give them
    dense = port.dense(with_statutory_words(question), [], 1)
    lexical = port.lexical(question, [], 1)
    assert step.best_dense == pytest.approx(dense[0][1], abs=1e-4)
    assert (step.best_lexical is not None) == has_words == bool(lexical)
    assert not has_words or step.best_lexical == pytest.approx(lexical[0][1], abs=1e-4)


def test_the_sentence_that_answers_far_into_a_long_article_is_stored_and_found(lldbi_index: dict[str, int]) -> None:
    # given КЗпП ст. 40, whose prohibition of dismissal during sick leave is its 18th sentence, and the lay question
    # the issue was filed with (read with the statute's words, as U4 reads it)
    with (DEMO_DIR / "demo_articles.jsonl").open(encoding="utf-8") as fh:
        text = next(r["text"] for r in map(json.loads, fh) if r["act_nreg"] == "322-08" and r["article"] == "40")
    said = meaning_sentences(text, max_sentences=100, max_chars=settings.MEANING_SENTENCE_CHARS)
    answer = next(i for i, s in enumerate(said) if s.startswith("Не допускається звільнення працівника"))
    assert answer >= 12  # beyond the 12 sentences ingest used to store
    asked = with_statutory_words("Чи може роботодавець звільнити мене, поки я на лікарняному?")
    embedder = default_embedder()
    q = embedder.embed_query([asked])[0]
    cosines = embedder.embed(said) @ q
    # then the article's best sentence is that one: its MaxSim reaches that sentence's cosine, above any of the
    # first twelve (e5's cosines crowd near 0.9; the shipped vectors are int8, within ~1e-3) — or the closeness of a
    # question people ask that the article answers, stored beside its sentences, where that comes closer still
    people = questions_of(stored_lay_questions(), "322-08", "40")
    best = max([float(cosines[answer]), *(embedder.embed(list(people)) @ q if people else [])])
    got = QdrantSearchPort().meaning(asked, ["322-08#st40#c0"])["322-08#st40#c0"]
    assert int(np.argmax(cosines)) == answer
    assert got == pytest.approx(best, abs=1.5e-3)
    assert float(cosines[answer]) > float(cosines[:12].max()) + 1.5e-3


class _SeenQueries(QdrantSearchPort):
    """The real port, noting what each list was asked."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: dict[str, list[str]] = {}

    def dense(self, query: str, act_nregs: list[str], limit: int) -> Any:
        self.asked.setdefault("dense", []).append(query)
        return super().dense(query, act_nregs, limit)

    def lexical(self, query: str, act_nregs: list[str], limit: int) -> Any:
        self.asked.setdefault("lexical", []).append(query)
        return super().lexical(query, act_nregs, limit)


def test_the_one_vector_list_reads_a_lay_question_with_the_statutes_words(lldbi_index: dict[str, int]) -> None:
    # given a question in lay words («лікарняний») that the statute calls «тимчасова непрацездатність»
    question = "Чи можуть мене звільнити, поки я на лікарняному?"
    port = _SeenQueries()
    plan = SearchPlan(steps=[SearchStep(kind="hybrid", query=question, limit=8)], channels=["lldbi_chunks"],
                      docs_probe=False)
    retrieve(plan, port, attempt=1)
    # then the dense list is asked with the statute's words beside the question (e5 knows the lay word no better
    # than BM25 does)
    assert port.asked["dense"] == [port.asked["dense"][0]]
    assert port.asked["dense"][0].startswith(question) and "непрацездатн" in port.asked["dense"][0]
    # BM25 gets the question as written and adds them itself; the statute's words are also searched alone (their
    # own list of the fusion)
    assert port.asked["lexical"][0] == question
    assert port.asked["lexical"][1:] == concepts(question) and "непрацездатн" in port.asked["lexical"][1]


def test_a_step_searches_at_most_concept_lists_max_phrases_alone(lldbi_index: dict[str, int],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # given a question with two lay phrases and room for one
    question = "Вимагають показати документи, а я на лікарняному"
    monkeypatch.setattr(retrieval, "CONCEPT_LISTS_MAX", 1)
    port = _SeenQueries()
    plan = SearchPlan(steps=[SearchStep(kind="hybrid", query=question, limit=8)], channels=["lldbi_chunks"],
                      docs_probe=False)
    retrieve(plan, port, attempt=1)
    # then the question and the first phrase alone are searched, the second phrase only within the question
    assert len(concepts(question)) == 2
    assert port.asked["lexical"] == [question, concepts(question)[0]]


def test_the_heading_field_puts_the_article_with_that_heading_first(lldbi_index: dict[str, int]) -> None:
    # given the heading of КЗпП ст. 24, whose words also fill many other labour articles
    for backend in ("qdrant", "edge"):
        hits = QdrantSearchPort(backend=backend).heading("Укладення трудового договору", [], 5)
        assert (hits[0][0]["act_nreg"], hits[0][0]["article"]) == ("322-08", "24"), backend
        assert all(p["ordinal"] == 0 for p, _ in hits)  # one heading per article


def test_an_act_filter_keeps_to_the_act_in_both_backends(lldbi_index: dict[str, int]) -> None:
    for backend in ("qdrant", "edge"):
        port = QdrantSearchPort(backend=backend)
        for hits in (port.lexical("відпустка", ["504/96-вр"], 10), port.dense("відпустка", ["504/96-вр"], 10)):
            assert hits
            assert {p["act_nreg"] for p, _ in hits} == {"504/96-ВР"}, backend


def test_the_exact_path_fetches_a_named_article_in_both_backends(lldbi_index: dict[str, int]) -> None:
    for backend in ("qdrant", "edge"):
        chunks = QdrantSearchPort(backend=backend).article(["322-08"], "36")
        assert chunks and {(p["act_nreg"], p["article"]) for p in chunks} == {("322-08", "36")}


def test_an_article_named_without_its_act_comes_first_from_the_acts_the_question_describes(
        lldbi_index: dict[str, int], settings: Any) -> None:
    # at 51k thousands of acts have an article 4 and only EXACT_ARTICLE_MAX_CHUNKS are kept: with room for two,
    # "процесуального кодексу" must keep two procedural codes, not Закон «Про відпустки» ст. 4 (first in the index)
    settings.EXACT_ARTICLE_MAX_CHUNKS = 2
    for backend in ("qdrant", "edge"):
        port = QdrantSearchPort(backend=backend)
        plain = {p["act_nreg"] for p in port.article([], "4")}
        described = port.article([], "4", hint="стаття 4 процесуального кодексу")
        assert "504/96-ВР" in plain, backend
        assert len(described) == 2 and {p["act_nreg"] for p in described} <= {"1618-15", "1798-12", "4651-17"}


def test_the_definition_path_finds_the_article_defining_the_term_in_both_backends(
        lldbi_index: dict[str, int]) -> None:
    for backend in ("qdrant", "edge"):
        port = QdrantSearchPort(backend=backend)
        found = port.definitions("дізнавачі", [], 5)  # another form of the term КПК ст. 3 defines
        assert found, backend
        payload, match = found[0]
        assert (payload["act_nreg"], payload["article"], match) == ("4651-17", "3", 1.0), backend
        assert payload["term"] == "дізнавач"
        assert port.definitions("дізнавач", ["322-08"], 5) == []  # the act filter holds


def test_a_definition_question_puts_the_defining_article_first(lldbi_index: dict[str, int]) -> None:
    from pipeline.contracts import QueryProfile
    from pipeline.stages.planning import plan_search

    question = "Що означає термін «досудове розслідування»?"
    profile = QueryProfile(mode="law", law_only=True, goals=[question], keywords=[], complexity="simple",
                           definition_term="досудове розслідування")
    hits, trace = retrieve(plan_search(question=question, profile=profile, top_k=10), QdrantSearchPort(),
                           attempt=1)
    top = hits.hits[0]
    assert (top.act_nreg, top.article, top.channel) == ("4651-17", "3", "definition")
    assert trace.steps[0].kind == "definition" and trace.steps[0].n_hits >= 1


def test_hits_are_fused_per_article_with_a_bounded_number_of_chunks(lldbi_index: dict[str, int]) -> None:
    plan = SearchPlan(steps=[SearchStep(kind="hybrid", query="трудовий договір припинення звільнення", limit=8)],
                      channels=["lldbi_chunks"], docs_probe=False)
    hits, trace = retrieve(plan, QdrantSearchPort(), attempt=1)
    per_article: dict[str, list[float]] = {}
    for h in hits.hits:
        per_article.setdefault(article_key({"act_nreg": h.act_nreg, "article": h.article}), []).append(h.score)
    assert len(per_article) == 8
    assert all(len(scores) <= CHUNKS_PER_ARTICLE and len(set(scores)) == 1 for scores in per_article.values())
    assert trace.steps[0].error is None


# --- eval_retrieval ------------------------------------------------------------------------------------------
def write_cases(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def run_eval(*args: str) -> list[str]:
    out = StringIO()
    call_command("eval_retrieval", *args, stdout=out, stderr=StringIO())
    return out.getvalue().strip().splitlines()


def test_eval_retrieval_scores_u1_to_u4_and_prints_json_last(catalog: None, tmp_path: Path) -> None:
    # given two answerable questions (one gold act number in another case) and one the slice cannot answer
    path = write_cases(tmp_path / "dev.jsonl", [
        {"question": "Чи обов'язково укладати трудовий договір у письмовій формі?",
         "gold": [{"act_nreg": "322-08", "article": "24"}]},
        {"question": "Що передбачає стаття 43 Конституції України?", "gold": [{"act_nreg": "254К/96-вр",
                                                                                  "article": "43"}]},
        {"question": "Яка ставка податку на прибуток підприємств?", "gold": [{"act_nreg": "2755-17",
                                                                                "article": "136"}]},
        {"question": "a line without gold is skipped"},
    ])
    # when
    lines = run_eval(str(path), "--k", "10", "--json")
    # then
    summary = json.loads(lines[-1])
    assert {k: summary[k] for k in ("n", "recall_at_k", "k", "level")} == {
        "n": 3, "recall_at_k": pytest.approx(2 / 3, abs=1e-3), "k": 10, "level": "article"}
    assert 0.5 <= summary["mrr"] <= 0.6667  # both found, one of them possibly not first
    assert summary["hit_at_10"] == pytest.approx(2 / 3, abs=1e-3) and summary["act_hit_at_5"] == pytest.approx(
        2 / 3, abs=1e-3)  # the Tax Code is not indexed: neither its article nor its act can be found
    # per act (of the first gold item) and per group: the Constitution's article has no heading
    assert summary["by_act"]["2755-17"]["hit_at_10"] == 0.0 and summary["by_act"]["322-08"]["hit_at_10"] == 1.0
    assert summary["by_group"]["unheaded"] == {**summary["by_act"]["254к/96-вр"]}
    assert summary["by_group"]["constitution"]["n"] == 1 and summary["by_group"]["code"]["n"] == 2  # КЗпП, ПКУ
    assert "2755-17" not in json.dumps(summary["by_group"]["headed"])  # an unindexed gold has no heading known
    misses = [line for line in lines if line.startswith("MISS")]
    assert len(misses) == 1 and "2755-17#136" in misses[0]
    assert any("skipped 1 lines" in line for line in lines)


def test_eval_retrieval_at_act_level(catalog: None, tmp_path: Path) -> None:
    path = write_cases(tmp_path / "dev.jsonl", [
        {"question": "Скільки днів триває щорічна основна відпустка?", "gold": [{"act_nreg": "504/96-вр",
                                                                                    "article": "999"}]}])
    assert json.loads(run_eval(str(path), "--level", "act", "--json")[-1])["recall_at_k"] == 1.0
    assert json.loads(run_eval(str(path), "--level", "article", "--json")[-1])["recall_at_k"] == 0.0


@pytest.mark.parametrize(("content", "args", "message"), [
    (None, [], "file not found"),
    ("{broken", [], "not JSON"),
    ('{"question": "q", "gold": [{"article": "1"}]}', [], "need act_nreg and article"),
    ('{"question": "q"}', [], "no line has a question and a gold list"),
    ('{"question": "q", "gold": [{"act_nreg": "1-1", "article": "1"}]}', ["--k", "0"], "--k must be positive"),
], ids=["missing", "broken", "bad-gold", "no-gold", "bad-k"])
def test_eval_retrieval_refuses_bad_input_with_a_sentence(db: Any, tmp_path: Path, content: str | None,
                                                           args: list[str], message: str) -> None:
    path = tmp_path / "cases.jsonl"
    if content is not None:
        path.write_text(content)
    with pytest.raises(CommandError, match=message.replace("--k must be positive", "--k must be a positive")):
        run_eval(str(path), *args)


def test_what_is_a_term_a_code_defines_in_its_own_style_puts_that_article_first(lldbi_index: dict[str, int]) -> None:
    from legaltext.definitions import definition_term
    from pipeline.contracts import QueryProfile
    from pipeline.stages.planning import plan_search

    question = "Що таке трудовий договір?"  # КЗпП ст. 21: "Трудовим договором є угода …"
    term = definition_term(question)
    assert term == "трудовий договір"
    profile = QueryProfile(mode="law", law_only=True, goals=[question], keywords=[], complexity="simple",
                           definition_term=term)
    hits, _ = retrieve(plan_search(question=question, profile=profile, top_k=10), QdrantSearchPort(), attempt=1)
    assert (hits.hits[0].act_nreg, hits.hits[0].article, hits.hits[0].channel) == ("322-08", "21", "definition")
    assert all(h.act_nreg != "4651-17" for h in hits.hits[:5])  # not КПК's list of definitions


SICK_LEAVE = "Чи можуть звільнити мене під час лікарняного?"


def _chunk_holding(act: str, article: str, words: str) -> str:
    """The key of the article's chunk (as ingest splits it) that holds ``words``."""
    from legaltext.chunking import split_text

    with (DEMO_DIR / "demo_articles.jsonl").open(encoding="utf-8") as fh:
        text = next(r["text"] for r in map(json.loads, fh) if r["act_nreg"] == act and r["article"] == article)
    parts = split_text(text, max_chars=settings.CHUNK_MAX_CHARS, overlap_chars=settings.CHUNK_OVERLAP_CHARS)
    return f"{act}#st{article}#c{next(i for i, p in enumerate(parts) if words in p)}"


def test_the_chunks_of_an_article_are_scored_by_the_question_alike_in_both_backends(
        lldbi_index: dict[str, int]) -> None:
    # given КЗпП ст. 40's chunks, one of which holds the prohibition of dismissal during sick leave
    keys = [f"322-08#st40#c{i}" for i in range(12)] + ["nope#st1#c0"]
    got = QdrantSearchPort(backend="edge").lexical_among(SICK_LEAVE, keys)
    want = QdrantSearchPort(backend="qdrant").lexical_among(SICK_LEAVE, keys)
    # then both backends find the article's chunks only (no point for a key that names none), scored alike, and the
    # chunk with the prohibition is among the two best (the two that join a first chunk matched by the lists)
    assert [p["chunk_key"] for p, _ in got] == [p["chunk_key"] for p, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=2e-3)
    assert {p["article"] for p, _ in got} == {"40"} and len(got) >= 2
    assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
    prohibition = _chunk_holding("322-08", "40", "Не допускається звільнення працівника")
    assert prohibition in [p["chunk_key"] for p, _ in got[:2]]


def test_the_chunk_that_answers_joins_an_article_found_by_its_first_chunk(lldbi_index: dict[str, int]) -> None:
    from pipeline.stages.retrieval import NO_RANKS, with_answering_chunks

    # given КЗпП ст. 40 found by its first chunk alone (as the one vector and the sentences' list find an article)
    port = QdrantSearchPort()
    first = next(c for c in port.article(["322-08"], "40") if c["chunk_key"].endswith("#c0"))
    fused = [([first], 1.0, "dense", NO_RANKS)]
    # when the step completes its articles' chunks
    chunks = with_answering_chunks(fused, port, SICK_LEAVE)[0][0]
    # then the chunk holding the prohibition of dismissal during sick leave joins the first, within the bound
    keys = [c["chunk_key"] for c in chunks]
    assert keys[0] == "322-08#st40#c0" and len(keys) == CHUNKS_PER_ARTICLE == len(set(keys))
    assert _chunk_holding("322-08", "40", "Не допускається звільнення працівника") in keys


def test_a_full_article_and_one_whose_other_chunks_share_no_word_keep_their_chunks(
        lldbi_index: dict[str, int]) -> None:
    from pipeline.stages.retrieval import NO_RANKS, with_answering_chunks

    port = QdrantSearchPort()
    art40 = sorted(port.article(["322-08"], "40"), key=lambda c: c["chunk_key"])
    full = [(art40[:CHUNKS_PER_ARTICLE], 1.0, "lexical", NO_RANKS)]
    assert with_answering_chunks(full, port, SICK_LEAVE) == full
    alone = [([art40[0]], 1.0, "dense", NO_RANKS)]
    assert with_answering_chunks(alone, port, "квазар пульсар") == alone


def test_the_chunk_that_answers_reaches_the_evidence_of_a_hybrid_step(lldbi_index: dict[str, int]) -> None:
    plan = SearchPlan(steps=[SearchStep(kind="hybrid", query=SICK_LEAVE, limit=8)], channels=["lldbi_chunks"],
                      docs_probe=False)
    hits, _ = retrieve(plan, QdrantSearchPort(), attempt=1)
    chunks = {h.chunk_key for h in hits.hits if (h.act_nreg, h.article) == ("322-08", "40")}
    assert _chunk_holding("322-08", "40", "Не допускається звільнення працівника") in chunks
    assert len(chunks) <= CHUNKS_PER_ARTICLE
