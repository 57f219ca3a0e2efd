"""The knowledge a fresh clone ships (``knowledge/corpus/``): the act catalog, then the 45 core acts.

One function loads both in the order they need: the catalog first, because the laws ingest reads it (the nregs of
acts the corpus names by its own id, the catalog's titles for placeholder ones) and marks the acts it indexes.
Both steps are resumable: the catalog load is idempotent, and the laws ingest skips articles already indexed, so a
re-run after an interruption continues and a re-run over a complete index writes nothing new."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from knowledge.embed_cache import SENTENCES, cache_file
from knowledge.ingest.catalog import catalog_load
from knowledge.ingest.corpus import evidence_sentences
from knowledge.ingest.jsonl import IngestError, find_jsonl
from knowledge.ingest.laws import IngestReport, laws_ingest
from legaltext.chunking import Article

CORPUS_DIR = Path(__file__).resolve().parents[1] / "corpus"
CATALOG_FILES = {"acts": "acts_catalog.jsonl", "aliases": "act_aliases.jsonl", "crossrefs": "act_name_crossrefs.jsonl"}
CORE_ARTICLES = "core_articles.jsonl"
# The official titles of catalog acts whose title is missing (four of the 45 core acts among them: without it an
# answer cites «Акт 2136-20 ст. 5»). Ours, not the shared data's: optional in a folder, always shipped here.
TITLES_FILE = "act_titles.jsonl"
# The names people call core acts by that the catalog lacks («Трудовий кодекс», «закон про поліцію»). Ours too.
NAMES_FILE = "act_names.jsonl"


@dataclass
class KnowledgeReport:
    catalog_records: int
    catalog_seconds: float
    laws: IngestReport
    seconds: float


def catalog_paths(folder: Path) -> dict[str, Path]:
    """The three catalog files of ``folder`` (plain or gzipped); all three are needed: a catalog without its
    aliases resolves «ЦК» to nothing, and that would pass unnoticed."""
    paths = {key: find_jsonl(folder, name) for key, name in CATALOG_FILES.items()}
    missing = [CATALOG_FILES[key] for key, path in paths.items() if path is None]
    if missing:
        raise IngestError(f"{folder}: missing {', '.join(missing)} (or .gz)")
    return {key: path for key, path in paths.items() if path is not None}


def corpus_path(folder: Path) -> Path:
    path = find_jsonl(folder, CORE_ARTICLES)
    if path is None:
        raise IngestError(f"{folder}: missing {CORE_ARTICLES} (or .gz)")
    return path


def dense_cache_note(folder: Path) -> str:
    """Tell the operator up front whether the dense vectors come from a cache or from the model (minutes)."""
    path = cache_file(folder, settings.EMBEDDING_MODEL)
    sentences = cache_file(folder, settings.EMBEDDING_MODEL, SENTENCES)
    if path.exists() and (sentences.exists() or settings.MEANING_SENTENCES <= 0):
        return f"dense vectors: from {path.parent} (no model time for the articles its caches hold)"
    missing = " and ".join(p.name for p in (path, sentences) if not p.exists())
    return (f"dense vectors: no {missing} in {folder}: articles no other cache holds are embedded with "
            f"{settings.EMBEDDING_MODEL} (about 20 min for the core corpus's articles on two cores, as long again "
            "for their sentences)")


def knowledge_load(*, folder: Path = CORPUS_DIR, acts: set[str] | None = None, limit: int | None = None,
                   batch_size: int | None = None, max_batches: int | None = None,
                   say: Callable[[str], None] = print) -> KnowledgeReport:
    """Load the catalog, then ingest the core corpus (``limit``/``acts``/``max_batches`` bound the corpus part,
    for a slice or a deliberate stop); ``say`` gets one line per step."""
    started = time.monotonic()
    paths = catalog_paths(folder)  # both checked before anything is written
    corpus = corpus_path(folder)
    n = catalog_load(acts_path=paths["acts"], aliases_path=paths["aliases"], crossrefs_path=paths["crossrefs"],
                     titles_path=find_jsonl(folder, TITLES_FILE), names_path=find_jsonl(folder, NAMES_FILE))
    catalog_seconds = time.monotonic() - started
    say(f"catalog: {n} records loaded in {catalog_seconds:.1f}s")
    say(dense_cache_note(folder))
    report = laws_ingest(path=corpus, acts=acts, limit=limit, batch_size=batch_size, max_batches=max_batches)
    return KnowledgeReport(n, catalog_seconds, report, time.monotonic() - started)


def writer_forms(article: Article) -> list[str]:
    """``evidence_sentences`` under this deployment's chunking and sentence settings: what the sentence cache holds
    for the offline writer besides ingest's own sentences (``export_embeddings``)."""
    return evidence_sentences(article, max_chars=settings.MEANING_SENTENCE_CHARS,
                              chunk_chars=settings.CHUNK_MAX_CHARS, overlap_chars=settings.CHUNK_OVERLAP_CHARS,
                              max_chunks=settings.ARTICLE_MAX_CHUNKS)
