"""Writes to the knowledge layer: ingest law articles (chunk, embed, store snippets, upsert) and the catalog."""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from knowledge import index
from knowledge.chunking import Article, Chunk, split_article
from knowledge.embeddings import Embedder, default_embedder
from knowledge.lexical import document_vector
from knowledge.models import Act
from knowledge.progress import Progress
from knowledge.snippets import SnippetStore, snippet_key

logger = logging.getLogger(__name__)


class IngestError(Exception):
    """Bad input to an ingest command: the message is a sentence for the operator."""


def _open_text(path: Path) -> Iterator[str]:
    if not path.exists():
        raise IngestError(f"file not found: {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        yield from fh


def read_articles(path: Path, *, acts: set[str] | None = None, limit: int | None = None) -> Iterator[Article]:
    """Stream articles from the corpus JSONL (core or scale format) without holding the file in memory."""
    wanted = {a.lower() for a in acts} if acts else None
    n = 0
    for lineno, line in enumerate(_open_text(path), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            nreg, article, text = rec["act_nreg"], str(rec["article"]), rec["text"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise IngestError(f"{path}:{lineno}: not a corpus record ({exc})") from exc
        if wanted is not None and nreg.lower() not in wanted:
            continue
        if not text or not text.strip():
            continue
        yield Article(
            act_nreg=nreg,
            act_title=rec.get("act_title") or f"Акт {nreg}",
            act_abbrev=rec.get("act_abbrev"),
            article=article,
            heading=rec.get("article_heading") or rec.get("title"),
            text=text,
            url=rec.get("url") or "",
        )
        n += 1
        if limit is not None and n >= limit:
            return


def embedding_text(chunk: Chunk) -> str:
    a = chunk.article
    head = f"{a.act_title}. Стаття {a.article}." + (f" {a.heading}." if a.heading else "")
    return f"{head} {chunk.text}"


def chunk_payload(chunk: Chunk, key: str) -> dict[str, Any]:
    a = chunk.article
    return {
        "chunk_key": chunk.chunk_key,
        "act_nreg": a.act_nreg,
        "act_nreg_key": a.act_nreg.lower(),
        "act_title": a.act_title,
        "act_abbrev": a.act_abbrev,
        "act_label": a.act_label,
        "article": a.article,
        "article_ref": a.article_ref,
        "heading": a.heading,
        "ordinal": chunk.ordinal,
        "r2_key": key,
        "url": a.url,
        "chars": len(chunk.text),
    }


@dataclass
class IngestReport:
    articles: int = 0
    chunks: int = 0
    upserted: int = 0
    skipped_existing: int = 0
    seconds: float = 0.0
    acts: dict[str, int] = field(default_factory=dict)


def _batches(chunks: Iterable[Chunk], size: int) -> Iterator[list[Chunk]]:
    batch: list[Chunk] = []
    for c in chunks:
        batch.append(c)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def laws_ingest(
    *,
    path: Path,
    acts: set[str] | None = None,
    limit: int | None = None,
    embedder: Embedder | None = None,
    store: SnippetStore | None = None,
    batch_size: int | None = None,
    show_progress: bool = True,
    update_catalog: bool = True,
) -> IngestReport:
    """Chunk, embed and upsert; safe to re-run: point ids and snippet keys are deterministic, and chunks already
    in the collection are skipped, so an interrupted ingest continues where it stopped."""
    embedder = embedder or default_embedder()
    store = store or SnippetStore()
    client = index.get_client()
    collection = settings.LLDBI_COLLECTION
    index.ensure_collection(client, collection, embedder.dim, payload_indexes=bool(settings.QDRANT_URL))
    report = IngestReport()
    titles: dict[str, tuple[str, str | None]] = {}
    progress = Progress("ingest_laws chunks") if show_progress else None

    def chunks() -> Iterator[Chunk]:
        for article in read_articles(path, acts=acts, limit=limit):
            report.articles += 1
            titles[article.act_nreg] = (article.act_title, article.act_abbrev)
            yield from split_article(article, max_chars=settings.CHUNK_MAX_CHARS,
                                     overlap_chars=settings.CHUNK_OVERLAP_CHARS)

    for batch in _batches(chunks(), batch_size or settings.EMBED_BATCH_SIZE):
        report.chunks += len(batch)
        for c in batch:
            report.acts[c.article.act_nreg] = report.acts.get(c.article.act_nreg, 0) + 1
        present = index.existing_ids(client, collection, [index.point_id(c.chunk_key) for c in batch])
        todo = [c for c in batch if index.point_id(c.chunk_key) not in present]
        report.skipped_existing += len(batch) - len(todo)
        if todo:
            vectors = embedder.embed([embedding_text(c) for c in todo])
            points = []
            for c, vec in zip(todo, vectors, strict=True):
                key = snippet_key(act_nreg=c.article.act_nreg, article=c.article.article, ordinal=c.ordinal)
                store.put(key, c.text)  # the text first: a point never refers to a missing snippet
                points.append(index.IndexedPoint(c.chunk_key, vec.tolist(), document_vector(embedding_text(c)),
                                                 chunk_payload(c, key)))
            index.upsert(client, collection, points)
            report.upserted += len(points)
        if progress:
            progress.advance(len(batch), note=f"articles={report.articles}")
    if progress:
        report.seconds = progress.finish(note=f"articles={report.articles} upserted={report.upserted}")
    if report.articles == 0:
        raise IngestError(f"no articles read from {path}" + (f" for acts {sorted(acts)}" if acts else ""))
    if update_catalog:
        catalog_mark_indexed(report.acts, titles)
    logger.info("ingest finished", extra={"articles": report.articles, "chunks": report.chunks,
                                          "upserted": report.upserted, "skipped": report.skipped_existing})
    return report


def catalog_mark_indexed(chunks_per_act: dict[str, int], titles: dict[str, tuple[str, str | None]]) -> None:
    """Tell DocList which acts LLDBI now holds (and under which abbreviation they are cited)."""
    for nreg, n in chunks_per_act.items():
        title, abbrev = titles[nreg]
        act, _ = Act.objects.get_or_create(nreg_key=nreg.lower(), defaults={"nreg": nreg, "title": title})
        act.indexed = True
        act.n_chunks = max(act.n_chunks, n)
        act.title = act.title or title
        if abbrev and abbrev not in act.abbreviations:
            act.abbreviations = [*act.abbreviations, abbrev]
        act.save()


def _is_abbreviation(name: str) -> bool:
    return " " not in name and len(name) <= 6


def catalog_load(*, acts_path: Path | None, aliases_path: Path | None) -> int:
    """Load the DocList catalog (acts, abbreviations, aliases) into the Act table; keeps ``indexed`` as is."""
    n = 0
    if acts_path is not None:
        for line in _open_text(acts_path):
            if not line.strip():
                continue
            rec = json.loads(line)
            act, _ = Act.objects.get_or_create(nreg_key=rec["nreg"].lower(), defaults={"nreg": rec["nreg"]})
            act.title = rec.get("title") or act.title
            act.abbreviations = sorted(set(act.abbreviations) | set(rec.get("abbreviations") or []))
            act.save()
            n += 1
    if aliases_path is not None:
        for line in _open_text(aliases_path):
            if not line.strip():
                continue
            rec = json.loads(line)
            act, _ = Act.objects.get_or_create(nreg_key=rec["nreg"].lower(), defaults={"nreg": rec["nreg"]})
            name = rec["alias"]
            if rec.get("full_name") and not act.title:
                act.title = rec["full_name"]
            if _is_abbreviation(name):
                if name not in act.abbreviations:
                    act.abbreviations = [*act.abbreviations, name]
            elif name.lower() not in act.aliases:
                act.aliases = [*act.aliases, name.lower()]
            act.save()
            n += 1
    return n
