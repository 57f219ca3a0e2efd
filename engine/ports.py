"""The I/O the stages need, built in the shell and handed to pure code: the act lexicon, the LLDBI search port,
the snippet store, the LLM gateway. Built lazily: a stage that needs no Qdrant never opens it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property, lru_cache
from typing import Any, cast

from django.conf import settings
from django.db.models import Count, Max, Q

from engine.lexicon_store import stored_lexicon
from knowledge import index, searchindex
from knowledge.edge import search_backend
from knowledge.embeddings import Embedder, default_embedder
from knowledge.lexical import Sparse, query_vector, question_vector
from knowledge.models import Act
from knowledge.snippets import SnippetStore
from legaltext.definitions import clean_term, rank_definitions, term_key
from legaltext.lexicon import ActLexicon
from legaltext.text import content_lemmas
from pipeline.stages.retrieval import ChunkPayload, Ranked

_lexicon_cache: dict[tuple[Any, ...], ActLexicon] = {}


def load_lexicon() -> ActLexicon:
    """The catalog as a lexicon, rebuilt only when the Act table changed (lemmatising titles is not free): kept in
    this process, and in a file a fresh process reads back (engine/lexicon_store.py)."""
    # the indexed count too: a queryset update() of ``indexed`` leaves updated_at as it was
    stamp = tuple(Act.objects.aggregate(n=Count("id"), t=Max("updated_at"),
                                        i=Count("id", filter=Q(indexed=True))).values())
    if stamp not in _lexicon_cache:
        _lexicon_cache.clear()
        _lexicon_cache[stamp] = stored_lexicon(stamp, lambda: list(
            Act.objects.values("nreg", "title", "abbreviations", "aliases", "indexed")))
    return _lexicon_cache[stamp]


def _ranked(rows: Sequence[tuple[Mapping[str, object], float]]) -> Ranked:
    """The index answers with the payloads ingest wrote (``knowledge.ingest.points.chunk_payload``): chunk payloads."""
    return cast(Ranked, list(rows))


class QdrantSearchPort:
    """LLDBI search. With a Qdrant server its own indexes answer; without one, the Qdrant Edge shards built from
    the local collection (knowledge/searchindex.py), opened read-only by every process that searches."""

    def __init__(self, embedder: Embedder | None = None, collection: str | None = None,
                 backend: str | None = None) -> None:
        self._embedder = embedder
        self.collection = collection or settings.LLDBI_COLLECTION
        self._query_cache: dict[str, list[float]] = {}
        self._sparse_cache: dict[str, Sparse] = {}
        self.backend = search_backend(backend)
        self.shards = self.backend == "edge"

    # The shard is looked up once a port (a port serves one stage): a stage searches one generation throughout, and
    # U4's ~10 searches do not each read the shard's CURRENT file. A shard an ingest builds meanwhile is searched
    # from the next stage on.
    @cached_property
    def _shard_index(self) -> searchindex.LocalSearchIndex:
        return searchindex.get_index(self.collection)

    def _local(self) -> searchindex.LocalSearchIndex:
        return self._shard_index

    def _terms(self) -> searchindex.LocalTermIndex:
        return searchindex.get_term_index(settings.LLDBI_TERMS_COLLECTION)

    @cached_property
    def embedder(self) -> Embedder:
        return self._embedder or default_embedder()

    @property
    def embed_model(self) -> str:
        return self.embedder.name

    def _vector(self, query: str) -> list[float]:
        # a plan often runs the same question with and without filters, and three lists read it: embedded once
        if query not in self._query_cache:
            self._query_cache[query] = self.embedder.embed_query([query])[0].tolist()
        return self._query_cache[query]

    def _sparse(self, query: str) -> Sparse:
        # the step's BM25, heading and chunk-completion searches read one question: lemmatised once
        if query not in self._sparse_cache:
            self._sparse_cache[query] = question_vector(query)
        return self._sparse_cache[query]

    def dense(self, query: str, act_nregs: list[str], limit: int) -> Ranked:
        if self.shards:
            return _ranked(self._local().dense_search(self._vector(query), [a.lower() for a in act_nregs], limit))
        return _ranked(index.dense_search(index.get_client(), self.collection, vector=self._vector(query),
                                          act_keys=[a.lower() for a in act_nregs], limit=limit))

    def lexical(self, query: str, act_nregs: list[str], limit: int) -> Ranked:
        if self.shards:
            return _ranked(self._local().lexical_search(self._sparse(query), [a.lower() for a in act_nregs],
                                                        limit))
        return _ranked(index.lexical_search(index.get_client(), self.collection, sparse=self._sparse(query),
                                            act_keys=[a.lower() for a in act_nregs], limit=limit))

    def lexical_among(self, query: str, chunk_keys: list[str]) -> Ranked:
        if self.shards:
            return _ranked(self._local().lexical_among(self._sparse(query), chunk_keys))
        return _ranked(index.lexical_among(index.get_client(), self.collection, sparse=self._sparse(query),
                                           chunk_keys=chunk_keys))

    def meaning(self, query: str, chunk_keys: list[str]) -> dict[str, float]:
        if self.shards:
            return self._local().meaning(self._vector(query), chunk_keys)
        if not self._has_sentences:
            return {}
        return index.meaning_search(index.get_client(), self.collection, vector=self._vector(query),
                                    chunk_keys=chunk_keys)

    def questions(self, query: str, chunk_keys: list[str]) -> dict[str, float]:
        if self.shards:
            return self._local().meaning(self._vector(query), chunk_keys, using=index.QUESTIONS)
        if not self._has_questions:
            return {}
        return index.meaning_search(index.get_client(), self.collection, vector=self._vector(query),
                                    chunk_keys=chunk_keys, using=index.QUESTIONS)

    @cached_property
    def _has_questions(self) -> bool:
        return index.has_dense(index.get_client(), self.collection, index.QUESTIONS)

    def meaning_search(self, query: str, act_nregs: list[str], limit: int, among: list[str] | None = None) -> Ranked:
        """The articles whose best sentence comes closest to the question. Every article's sentences are scanned
        (exact MaxSim) while the index holds at most MEANING_SCAN_MAX_POINTS points; a larger index is searched
        among the listed first chunks only (README, "Speed")."""
        acts = [a.lower() for a in act_nregs]
        within = list(among or []) if self._sentence_scan_bounded else []  # empty: the whole index
        if self._sentence_scan_bounded and not within:
            return []  # nothing to search among: a bounded index is never scanned whole
        if self.shards:
            return _ranked(self._local().sentence_search(self._vector(query), acts, limit, among=within))
        if not self._has_sentences:
            return []
        return _ranked(index.sentence_search(index.get_client(), self.collection, vector=self._vector(query),
                                             act_keys=acts, limit=limit, among=within or None))

    @cached_property
    def _sentence_scan_bounded(self) -> bool:
        points = self._local().points() if self.shards else index.count(index.get_client(), self.collection)
        return points > settings.MEANING_SCAN_MAX_POINTS

    @cached_property
    def _has_sentences(self) -> bool:
        return index.has_dense(index.get_client(), self.collection, index.SENTENCES)

    def question_words(self, query: str, act_nregs: list[str], limit: int) -> Ranked:
        acts = [a.lower() for a in act_nregs]
        if self.shards:
            return _ranked(self._local().question_words_search(self._sparse(query), acts, limit))
        if not self._has_question_words:
            return []
        return _ranked(index.lexical_search(index.get_client(), self.collection, sparse=self._sparse(query),
                                            act_keys=acts, limit=limit, using=index.QUESTION_WORDS))

    @cached_property
    def _has_question_words(self) -> bool:
        return index.has_sparse(index.get_client(), self.collection, index.QUESTION_WORDS)

    def heading(self, query: str, act_nregs: list[str], limit: int) -> Ranked:
        if self.shards:
            return _ranked(self._local().heading_search(self._sparse(query), [a.lower() for a in act_nregs],
                                                        limit))
        if not self._has_heading:
            return []
        return _ranked(index.lexical_search(index.get_client(), self.collection, sparse=self._sparse(query),
                                            act_keys=[a.lower() for a in act_nregs], limit=limit,
                                            using=index.HEADING))

    @cached_property
    def _has_heading(self) -> bool:
        return index.has_sparse(index.get_client(), self.collection, index.HEADING)

    @cached_property
    def _has_terms(self) -> bool:  # a collection ingested before the terms existed has none (asked once per port)
        return index.has_sparse(index.get_client(), settings.LLDBI_TERMS_COLLECTION, index.TERM)

    def article(self, act_nregs: list[str], article: str, hint: str = "") -> list[ChunkPayload]:
        # An article named without its act ("стаття 4 процесуального кодексу") is fetched from every act, so that
        # a later clarification can bind the act from U4's hits without rerunning U4 (seed 001). At 51k thousands
        # of acts have an article 4: the acts whose titles share the most words with the question's own words for
        # the act ("процесуального кодексу") come first, and the first EXACT_ARTICLE_MAX_CHUNKS are kept.
        limit = settings.EXACT_ARTICLE_MAX_CHUNKS
        acts = [a.lower() for a in act_nregs]
        pool = limit if acts or not hint else max(limit, settings.EXACT_ARTICLE_SCAN_MAX)
        if self.shards:
            rows = self._local().article(acts, article, limit=pool)
        else:
            rows = index.article_chunks(index.get_client(), self.collection, act_keys=acts, article=article,
                                        limit=pool)
        found = cast(list[ChunkPayload], rows)  # the payloads ingest wrote
        return by_title_match(found, hint)[:limit] if hint and not acts else found[:limit]

    def definitions(self, term: str, act_nregs: list[str], limit: int) -> Ranked:
        """Articles that define ``term``: the same term first (its key, lemmas in order), then near forms."""
        key = term_key(clean_term(term))
        if not key:
            return []
        acts = [a.lower() for a in act_nregs]
        pool = max(limit * 4, 40)
        if self.shards:
            terms = self._terms()
            candidates = terms.exact(key, acts, pool) + terms.similar(query_vector(term), acts, pool)
        else:
            client = index.get_client()
            name = settings.LLDBI_TERMS_COLLECTION
            if not self._has_terms:
                return []
            candidates = index.term_points(client, name, key=key, act_keys=acts, limit=pool)
            candidates += [p for p, _ in index.lexical_search(client, name, sparse=query_vector(term),
                                                              act_keys=acts, limit=pool, using=index.TERM)]
        return _ranked(rank_definitions(key, candidates, limit))


@lru_cache(maxsize=20_000)
def _title_lemmas(title: str) -> frozenset[str]:
    return frozenset(content_lemmas(title))


def by_title_match(payloads: list[ChunkPayload], hint: str) -> list[ChunkPayload]:
    """Payloads ordered by how many of the hint's lemmas their act's title holds (stable among equals)."""
    wanted = set(content_lemmas(hint))
    if not wanted:
        return payloads
    return sorted(payloads, key=lambda p: -len(wanted & _title_lemmas(str(p.get("act_title") or ""))))


def snippet_store() -> SnippetStore:
    return SnippetStore()
