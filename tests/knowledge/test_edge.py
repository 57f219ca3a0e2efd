"""The Qdrant Edge shards (knowledge/edge.py, knowledge/searchindex.py): they rank as qdrant-client's local mode does
on the same points, carry every named vector of the collection, and are rebuilt, swapped and opened by several
processes as ingest and an upgrade need."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from typing import Any

import pytest
import qdrant_edge as qe
from django.conf import settings
from django.core.management import call_command
from qdrant_client import models

from engine.ports import QdrantSearchPort
from knowledge import edge, index, searchindex
from knowledge.lexical import Sparse, query_vector

QUERIES = ["Чи обов'язково укладати трудовий договір у письмовій формі?",
           "тривалість щорічної основної відпустки", "право на працю", "Форма трудового договору"]
TOLERANCE = 2e-3  # float32 sums in another order; scores this close count as tied


def _same_ranking(got: list[tuple[Any, float]], want: list[tuple[Any, float]], limit: int) -> None:
    """The same scores, and the same points in the same order wherever the scores are not tied (tied points may
    come in either order from the local mode, and differ at the cut)."""
    assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=TOLERANCE)
    cut = want[-1][1] + TOLERANCE if len(want) == limit else float("-inf")

    def order(rows: list[tuple[Any, float]]) -> list[tuple[float, str]]:
        return sorted(((round(-s / TOLERANCE), p["chunk_key"]) for p, s in rows if s > cut))

    assert order(got) == order(want)


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("acts", [[], ["322-08"], ["504/96-вр", "322-08"]], ids=["all", "one-act", "two-acts"])
def test_the_shard_ranks_as_the_local_mode_does(lldbi_index: dict[str, int], query: str, acts: list[str]) -> None:
    shard, qdrant = QdrantSearchPort(backend="edge"), QdrantSearchPort(backend="qdrant")
    for method in ("lexical", "heading", "dense"):
        got, want = getattr(shard, method)(query, acts, 10), getattr(qdrant, method)(query, acts, 10)
        _same_ranking(got, want, 10)
        assert want or method == "heading", method  # a question may share no word with the act's headings


def test_the_dense_search_scans_int8_copies_and_rescores_to_the_exact_scores(lldbi_index: dict[str, int]) -> None:
    search = searchindex.get_index()
    shard = search.shard
    assert shard is not None
    vector = [float(x) for x in QdrantSearchPort().embedder.embed_query([QUERIES[0]])[0]]

    def scores(params: Any) -> list[tuple[str, float]]:
        found = shard.engine.query(qe.QueryRequest(limit=10, query=qe.Query.Nearest(vector, using=index.DENSE),
                                                          with_payload=False, params=params))
        return [(str(p.id), p.score) for p in found]

    exact = scores(searchindex.EXACT)
    # the shard holds int8 copies: read alone, they score otherwise than the float vectors
    approximate = scores(qe.SearchParams(quantization=qe.QuantizationSearchParams(rescore=False)))
    assert [s for _, s in approximate] != pytest.approx([s for _, s in exact], abs=1e-6)
    # and the search U4 runs rescores them: the exact scan's points and scores
    got = search.dense_search(vector, [], 10)
    assert [(p["chunk_key"], s) for p, s in got] == [
        (p["chunk_key"], s) for p, s in search._nearest(index.DENSE, vector, [], 10, params=searchindex.EXACT,
                                                   by_act=True)]
    assert [s for _, s in got] == pytest.approx([s for _, s in exact], abs=1e-6)


def _rchar() -> int:
    """Bytes this process has read through read() calls so far (a page fault on a mapped file counts nothing)."""
    with open("/proc/self/io") as f:
        return int(next(line for line in f if line.startswith("rchar:")).split()[1])


def test_the_int8_copies_are_mapped_and_read_in_one_pass_when_the_shard_opens(lldbi_index: dict[str, int]) -> None:
    # given the law shard: its int8 copies are mapped ("cold"), not copied into each process's RAM on open
    name = settings.LLDBI_COLLECTION
    generation = edge.current_generation(name)
    assert generation is not None
    shard_dir = edge.shard_root(name) / generation / "shard"
    config = json.loads((shard_dir / "edge_config.json").read_text())
    assert config["vectors"][index.DENSE]["quantization_config"]["scalar"]["memory"] == "cold"
    copies = list(shard_dir.glob(edge._SCANNED_WHOLE))
    assert copies, "the dense vector has int8 copies"
    # when a process opens it
    edge.forget(name)
    before = _rchar()
    assert edge.open_shard(name) is not None
    # then it has read them whole, in large blocks, before the first search needs them
    assert _rchar() - before >= sum(p.stat().st_size for p in copies)


def test_the_exact_paths_answer_as_the_local_mode_does(lldbi_index: dict[str, int]) -> None:
    shard, qdrant = QdrantSearchPort(backend="edge"), QdrantSearchPort(backend="qdrant")
    for acts, article in ((["322-08"], "36"), ([], "4"), (["504/96-вр", "322-08"], "2")):
        assert shard.article(acts, article) == qdrant.article(acts, article)
        assert shard.article(acts, article), (acts, article)
    def ranked(rows: list[tuple[Any, float]]) -> list[tuple[float, str, str]]:  # equal matches in either order
        return sorted((-s, p["chunk_key"], p["term"]) for p, s in rows)

    for term, acts in (("дізнавачі", []), ("трудовий договір", []), ("дізнавач", ["322-08"])):
        got, want = shard.definitions(term, acts, 5), qdrant.definitions(term, acts, 5)
        assert ranked(got) == ranked(want) and got[:1] == want[:1]


# --- lifecycle, on small collections of their own ----------------------------------------------------------------
def _collection(name: str, n: int, *, extra: bool = False) -> str:
    """``n`` points over two acts: a dense vector on every other point, BM25 text, and optionally a named sparse
    vector that knowledge/index.py does not define."""
    client = index.get_client()
    if client.collection_exists(name):
        client.delete_collection(name)
    sparse = {index.LEXICAL: models.SparseVectorParams(modifier=models.Modifier.IDF)}
    if extra:
        sparse["extra"] = models.SparseVectorParams(modifier=models.Modifier.IDF)
    client.create_collection(name, vectors_config={index.DENSE: models.VectorParams(
        size=4, distance=models.Distance.COSINE)}, sparse_vectors_config=sparse)
    _add(name, range(n), extra=extra)
    return name


def _add(name: str, ids: range, *, extra: bool = False) -> None:
    points = []
    for i in ids:
        vector: dict[str, Any] = {index.LEXICAL: models.SparseVector(indices=[i % 5, 10 + i % 3], values=[1.0, 0.5])}
        if i % 2 == 0:
            vector[index.DENSE] = [1.0, float(i % 7), 0.5, float(i % 3)]
        if extra:
            vector["extra"] = models.SparseVector(indices=[i % 4], values=[1.0 + i % 2])
        points.append(models.PointStruct(id=index.point_id(f"p{i}"), vector=vector, payload={
            "chunk_key": f"p{i}", "act_nreg_key": f"a{i % 2}", "article": str(i % 6)}))
    index.get_client().upsert(name, points=points, wait=True)


def test_the_lay_questions_vectors_are_mapped_and_the_scanned_sentences_held(lldbi_index: dict[str, int]) -> None:
    """U4 reads a step's first five articles' lay questions only: mapped, they cost no process RAM (the core's
    ~13,000 cost ~65 MB of every `ask` held); the sentences, scanned for every question, stay in memory."""
    generation = edge.current_generation(settings.LLDBI_COLLECTION)
    assert generation is not None
    config = json.loads((edge.shard_root(settings.LLDBI_COLLECTION) / generation / "shard" / "edge_config.json")
                        .read_text())
    assert config["vectors"][index.QUESTIONS]["on_disk"] is True
    assert not config["vectors"][index.SENTENCES].get("on_disk")


def test_any_named_sparse_vector_of_the_collection_is_carried_into_the_shard(db: Any) -> None:
    name = _collection("edge_extra", 40, extra=True)
    edge.build_shard(index.get_client(), name, index.CHUNK_KEYWORD_FIELDS)
    got = searchindex.get_index(name).sparse_search("extra", Sparse([1, 2], [1.0, 1.0]), ["a1"], 10)
    want = index.lexical_search(index.get_client(), name, sparse=Sparse([1, 2], [1.0, 1.0]), act_keys=["a1"],
                                limit=10, using="extra")
    _same_ranking(got, want, 10)
    assert {p["act_nreg_key"] for p, _ in got} == {"a1"}


def test_a_rebuild_is_picked_up_by_a_process_that_has_the_old_shard_open(db: Any) -> None:
    # given a shard open in this process
    name = _collection("edge_rebuild", 10)
    edge.build_shard(index.get_client(), name, index.CHUNK_KEYWORD_FIELDS)
    first = edge.open_shard(name)
    assert first is not None and first.engine.info().points_count == 10
    # when the collection grows and the shard is rebuilt twice (as two ingests would)
    _add(name, range(10, 25))
    edge.build_shard(index.get_client(), name, index.CHUNK_KEYWORD_FIELDS)
    edge.build_shard(index.get_client(), name, index.CHUNK_KEYWORD_FIELDS)
    # then the next search opens the newest generation, and one generation before it is kept for open readers
    latest = edge.open_shard(name)
    assert latest is not None and latest.generation != first.generation and latest.engine.info().points_count == 25
    generations = [p.name for p in edge.shard_root(name).iterdir() if p.is_dir()]
    assert len(generations) == 1 + settings.LLDBI_SHARD_GENERATIONS_KEPT and first.generation not in generations


@pytest.mark.parametrize(("field", "value"), [("edge_version", "0.0.1"), ("layout", 1), ("layout", 2)],
                         ids=["another-engine-version", "an-older-layout", "int8-copies-in-ram"])
def test_a_shard_of_another_engine_version_is_rebuilt_not_opened(db: Any, field: str, value: object) -> None:
    name = _collection("edge_upgrade", 6)
    path = edge.build_shard(index.get_client(), name, index.CHUNK_KEYWORD_FIELDS)
    assert path is not None
    manifest = json.loads((path / edge.MANIFEST).read_text())
    (path / edge.MANIFEST).write_text(json.dumps({**manifest, field: value}))
    edge.forget(name)
    with pytest.raises(edge.ShardOutdated, match="build_search_shards"):
        edge.open_shard(name)
    rebuilt = edge.ensure_shard(name, index.CHUNK_KEYWORD_FIELDS)
    assert rebuilt is not None and rebuilt.generation != path.name


def test_no_collection_means_no_shard_and_empty_answers(db: Any) -> None:
    assert edge.ensure_shard("edge_missing", index.CHUNK_KEYWORD_FIELDS) is None
    search = searchindex.get_index("edge_missing")
    assert search.dense_search([1.0, 0.0, 0.0, 0.0], [], 5) == [] and search.article([], "1") == []


def test_several_processes_search_one_shard_at_once(db: Any) -> None:
    # given a shard this process has open
    name = _collection("edge_shared", 30)
    edge.build_shard(index.get_client(), name, index.CHUNK_KEYWORD_FIELDS)
    shard = edge.open_shard(name)
    assert shard is not None
    path = str(edge.shard_root(name) / shard.generation / "shard")
    # when three more processes open it and search it at the same time
    probe = ("import sys, qdrant_edge as qe; s = qe.EdgeShard.load(sys.argv[1]); "
             "q = qe.QueryRequest(limit=3, query=qe.Query.Nearest(qe.SparseVector(indices=[1], values=[1.0]), "
             "using='lexical')); print(len(s.query(q)), s.info().points_count)")
    procs = [subprocess.Popen([sys.executable, "-c", probe, path], stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    # then every one of them answers, and so does this one
    assert [p.communicate(timeout=60)[0].split() for p in procs] == [["3", "30"]] * 3
    assert len(searchindex.get_index(name).lexical_search(Sparse([1], [1.0]), [], 3)) == 3


def test_build_search_shards_rebuilds_the_law_and_terms_shards(lldbi_index: dict[str, int], db: Any) -> None:
    """(The database: the command also rebuilds the shards of users' documents that need it, none here.)"""
    before = {n: edge.current_generation(n) for n in (settings.LLDBI_COLLECTION, settings.LLDBI_TERMS_COLLECTION)}
    out = StringIO()
    call_command("build_search_shards", stdout=out)
    assert all(edge.current_generation(n) != g for n, g in before.items())
    assert f"qdrant-edge {edge.edge_version()}" in out.getvalue()
    assert "user documents: 0 shards rebuilt" in out.getvalue()
    assert searchindex.get_term_index().similar(query_vector("дізнавач"), [], 3)
