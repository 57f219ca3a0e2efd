"""Ingest law articles into LLDBI: chunk, embed, store the snippets, upsert the points and the defined terms.

Streamed in bounded batches of whole articles and safe to re-run: point ids and snippet keys are deterministic,
and articles already in the collection are skipped, so an interrupted ingest continues where it stopped."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from knowledge import edge, index
from knowledge.embed_cache import SENTENCES, VectorCache, embed_with_cache
from knowledge.embeddings import Embedder, default_embedder
from knowledge.ingest.catalog import catalog_mark_indexed
from knowledge.ingest.corpus import article_sentences, dense_text, read_articles
from knowledge.ingest.jsonl import IngestError, count_lines
from knowledge.ingest.lay_questions import LayQuestions, questions_for, stored_lay_questions
from knowledge.ingest.points import chunk_point, chunk_snippet_key, term_points
from knowledge.lexical import questions_vector
from knowledge.models import Act
from knowledge.progress import Progress
from knowledge.selectors import act_corpus_ids, act_names
from knowledge.snippets import SnippetStore
from legaltext.chunking import Article, Chunk, split_article

logger = logging.getLogger(__name__)


@dataclass
class IngestReport:
    articles: int = 0
    chunks: int = 0
    upserted: int = 0
    skipped_existing: int = 0
    terms: int = 0
    batches: int = 0
    vectors_cached: int = 0  # dense vectors found in the embedding cache instead of embedded
    sentences: int = 0  # sentence vectors stored (U4's meaning rerank)
    sentences_cached: int = 0  # of which found in the sentence cache
    seconds: float = 0.0
    stopped_early: bool = False
    acts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class _Target:
    """Where and how one ingest writes, fixed when it starts."""

    client: Any  # a QdrantClient
    collection: str
    terms_collection: str
    embedder: Embedder
    store: SnippetStore
    vector_cache: VectorCache
    sentence_cache: VectorCache
    with_heading: bool  # collections from before the heading field go on without it
    meaning_sentences: int  # sentence vectors per article; 0: none (a collection from before them, or turned off)
    meaning_chars: int
    max_chars: int
    overlap_chars: int
    max_chunks: int  # chunks kept per article (some annexes are 1 MB)
    head_chars: int
    # the questions people ask that an article answers, stored with its sentences
    asked: LayQuestions = field(default_factory=dict)
    with_questions: bool = False  # and alone (index.QUESTIONS): collections from before go on without
    with_question_words: bool = False  # and their words (index.QUESTION_WORDS)


@dataclass
class _Tally:
    """What the ingest has counted so far: the report, and each act's title for the catalog at the end."""

    report: IngestReport = field(default_factory=IngestReport)
    titles: dict[str, tuple[str, str | None]] = field(default_factory=dict)


def _open_target(embedder: Embedder, store: SnippetStore) -> _Target:
    # read before anything is created: a bad file is the operator's sentence, not an empty collection
    asked = stored_lay_questions()
    client = index.get_client()
    collection, terms_collection = settings.LLDBI_COLLECTION, settings.LLDBI_TERMS_COLLECTION
    index.ensure_collection(client, collection, embedder.dim, payload_indexes=bool(settings.QDRANT_URL))
    index.ensure_terms_collection(client, terms_collection, payload_indexes=bool(settings.QDRANT_URL))
    with_sentences = settings.MEANING_SENTENCES > 0 and index.has_dense(client, collection, index.SENTENCES)
    with_questions = index.has_dense(client, collection, index.QUESTIONS)
    with_words = index.has_sparse(client, collection, index.QUESTION_WORDS)
    if asked and not (with_questions and with_words):
        # an existing collection keeps its schema and this ingest skips the articles it holds: say how to get them
        logger.warning("collection predates the lay questions' own fields; U4 ranks without them until it is "
                       "rebuilt (an empty LEXERY_VAR_DIR or a new LLDBI_COLLECTION)", extra={"collection": collection})
    return _Target(client, collection, terms_collection, embedder, store,
                   VectorCache(embedder.name, settings.EMBEDDING_CACHE_DIRS),
                   VectorCache(embedder.name, settings.EMBEDDING_CACHE_DIRS if with_sentences else [], SENTENCES),
                   index.has_sparse(client, collection, index.HEADING),
                   settings.MEANING_SENTENCES if with_sentences else 0, settings.MEANING_SENTENCE_CHARS,
                   settings.CHUNK_MAX_CHARS, settings.CHUNK_OVERLAP_CHARS, settings.ARTICLE_MAX_CHUNKS,
                   settings.DENSE_HEAD_CHARS, asked if with_sentences else {},
                   with_sentences and with_questions, with_words)


def _refresh_shards(target: _Target, *, chunks_changed: bool, terms_changed: bool) -> None:
    """Searches read the Edge shards (knowledge/edge.py), not the collections: what this ingest wrote is searchable
    once they are rebuilt (a few seconds for the core, every process picks the new shard up on its next search)."""
    if edge.search_backend() != "edge":
        return
    for name, fields, changed in ((target.collection, index.CHUNK_KEYWORD_FIELDS, chunks_changed),
                                  (target.terms_collection, index.TERM_KEYWORD_FIELDS, terms_changed)):
        if changed or edge.current_generation(name) is None:
            edge.build_shard(target.client, name, fields)


def _forget_corpus_ids(target: _Target, canonical: dict[str, str]) -> bool:
    """An ingest before the catalog knew a corpus id stored its act under that id ("ЗУ ЕК" instead of 1089-20):
    those points and the Act row it made are dropped, and this ingest stores the act under its nreg. True: some were."""
    if not canonical:
        return False
    stale = list(Act.objects.filter(nreg_key__in=list(canonical)).values_list("nreg_key", flat=True))
    for key in stale:
        index.delete_act(target.client, target.collection, key)
        index.delete_act(target.client, target.terms_collection, key)
        logger.info("corpus id replaced by the act's nreg", extra={"corpus_id": key, "nreg": canonical[key]})
    if stale:
        Act.objects.filter(nreg_key__in=stale).delete()
    return bool(stale)


def _chunked(articles: Iterable[Article], target: _Target, tally: _Tally) -> Iterator[list[Chunk]]:
    """Each article's chunks, counting the article and keeping its act's title as it passes."""
    for article in articles:
        tally.report.articles += 1
        tally.titles[article.act_nreg] = (article.act_title, article.act_abbrev)
        yield split_article(article, max_chars=target.max_chars,
                            overlap_chars=target.overlap_chars)[:target.max_chunks]


def _article_batches(articles: Iterable[list[Chunk]], size: int) -> Iterator[list[list[Chunk]]]:
    """Whole articles per batch: a batch is upserted in one call, so an interruption never leaves half an
    article behind, and "its last chunk exists" means "the article is indexed"."""
    batch: list[list[Chunk]] = []
    n = 0
    for chunks in articles:
        batch.append(chunks)
        n += len(chunks)
        if n >= size:
            yield batch
            batch, n = [], 0
    if batch:
        yield batch


def _write_articles(target: _Target, todo: list[list[Chunk]], report: IngestReport) -> None:
    """Embed the articles' heads, store every chunk's text, then upsert their points in one call."""
    heads, cached = embed_with_cache(
        target.embedder, [dense_text(cs[0].article, target.head_chars) for cs in todo], target.vector_cache)
    report.vectors_cached += cached
    sentences = _sentence_vectors(target, todo, report)
    points = []
    for chunks, head, (said, asked) in zip(todo, heads, sentences, strict=True):
        vector = head.tolist()
        article = chunks[0].article
        words = (questions_vector(questions_for(target.asked, article))
                 if target.with_question_words else None)
        for c in chunks:
            key = chunk_snippet_key(c)
            target.store.put(key, c.text)  # the text first: a point never refers to a missing snippet
            points.append(chunk_point(c, key, vector, with_heading=target.with_heading, sentences=said,
                                      questions=asked if target.with_questions else None,
                                      question_words=words))
    index.upsert(target.client, target.collection, points)
    report.upserted += len(points)
    report.batches += 1


Vectors = list[list[float]]


def _sentence_vectors(target: _Target, todo: list[list[Chunk]], report: IngestReport) -> list[tuple[Vectors, Vectors]]:
    """Each article's sentence vectors and, of those, its lay questions' (cached ones looked up, the rest embedded
    in one call); none when off."""
    asked = [questions_for(target.asked, cs[0].article) for cs in todo]
    said = [article_sentences(cs[0].article, max_sentences=target.meaning_sentences, max_chars=target.meaning_chars,
                              asked=questions) for cs, questions in zip(todo, asked, strict=True)]
    flat = [s for sentences in said for s in sentences]
    if not flat:
        return [([], []) for _ in todo]
    vectors, cached = embed_with_cache(target.embedder, flat, target.sentence_cache)
    report.sentences += len(flat)
    report.sentences_cached += cached
    out, at = [], 0
    for sentences, questions in zip(said, asked, strict=True):
        rows = vectors[at:at + len(sentences)]
        row = {s: i for i, s in enumerate(sentences)}
        # article_sentences stores each question cut as it cuts sentences
        mine = [row[q] for q in dict.fromkeys(q[:target.meaning_chars] for q in questions) if q in row]
        out.append((rows.tolist(), rows[mine].tolist()))
        at += len(sentences)
    return out


def _write_terms(target: _Target, batch: list[list[Chunk]], report: IngestReport) -> None:
    """Terms for every article of the batch, indexed or not: cheap (no embeddings), and it backfills the terms of a
    collection ingested before they existed. Point ids are deterministic: a re-run overwrites."""
    terms = [p for chunks in batch for p in term_points(chunks)]
    if terms:
        index.upsert_terms(target.client, target.terms_collection, terms)
        report.terms += len(terms)


def _ingest_batch(target: _Target, batch: list[list[Chunk]], report: IngestReport) -> None:
    for chunks in batch:
        nreg = chunks[0].article.act_nreg
        report.acts[nreg] = report.acts.get(nreg, 0) + len(chunks)
        report.chunks += len(chunks)
    present = index.existing_ids(target.client, target.collection,
                                 [index.point_id(cs[-1].chunk_key) for cs in batch])
    todo = [cs for cs in batch if index.point_id(cs[-1].chunk_key) not in present]
    report.skipped_existing += sum(len(cs) for cs in batch) - sum(len(cs) for cs in todo)
    if todo:
        _write_articles(target, todo, report)
    _write_terms(target, batch, report)


def laws_ingest(
    *,
    path: Path,
    acts: set[str] | None = None,
    limit: int | None = None,
    embedder: Embedder | None = None,
    store: SnippetStore | None = None,
    batch_size: int | None = None,
    max_batches: int | None = None,
    show_progress: bool = True,
    update_catalog: bool = True,
) -> IngestReport:
    """Chunk, embed and upsert in bounded batches; ``max_batches`` stops on purpose after that many written
    batches (a re-run continues from there). Memory stays bounded by one batch: the file is streamed and only
    per-act counters are kept."""
    target = _open_target(embedder or default_embedder(), store or SnippetStore())
    tally = _Tally()
    report = tally.report
    total = count_lines(path) if show_progress and limit is None and acts is None else None
    progress = Progress("ingest_laws records", total=total or limit) if show_progress else None
    # The catalog's nregs for corpus ids; an ingest told to leave the catalog alone reads none of it either.
    canonical = act_corpus_ids() if update_catalog else {}
    names = act_names() if update_catalog else {}
    forgot = _forget_corpus_ids(target, canonical)
    read = [0]  # the file's records so far (a record gives an article and may give its act's final provisions)
    articles = read_articles(path, acts=acts, limit=limit, canonical=canonical, names=names, read=read)
    for batch in _article_batches(_chunked(articles, target, tally), batch_size or settings.EMBED_BATCH_SIZE):
        _ingest_batch(target, batch, report)
        if progress:
            progress.advance(read[0] - progress.done, note=f"articles={report.articles} chunks={report.chunks} "
                                                          f"new={report.upserted}")
        if max_batches is not None and report.batches >= max_batches:
            report.stopped_early = True
            break
    if progress:
        report.seconds = progress.finish(note=f"articles={report.articles} chunks={report.chunks} "
                                              f"new={report.upserted}")
    _refresh_shards(target, chunks_changed=forgot or report.upserted > 0, terms_changed=forgot or report.terms > 0)
    if report.articles == 0:
        raise IngestError(f"no articles read from {path}" + (f" for acts {sorted(acts)}" if acts else ""))
    if update_catalog:
        catalog_mark_indexed(report.acts, tally.titles)
    logger.info("ingest finished", extra={"articles": report.articles, "chunks": report.chunks,
                                          "upserted": report.upserted, "skipped": report.skipped_existing})
    return report
