"""Writes to the knowledge layer: ingest law articles (chunk, embed, store snippets, upsert) and the catalog."""

from __future__ import annotations

import gzip
import json
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from knowledge import index, searchindex, termindex
from knowledge.embed_cache import VectorCache, embed_with_cache
from knowledge.embeddings import Embedder, default_embedder
from knowledge.lexical import Sparse, document_vector, heading_vector
from knowledge.models import Act
from knowledge.progress import Progress
from knowledge.selectors import act_corpus_ids, act_names
from knowledge.snippets import SnippetStore, snippet_key
from legaltext.chunking import Article, Chunk, is_placeholder_title, split_article
from legaltext.definitions import TERM_AVGDL, extract_terms
from legaltext.lexicon import lemma_seq
from legaltext.text import normalize

logger = logging.getLogger(__name__)


class IngestError(Exception):
    """Bad input to an ingest command: the message is a sentence for the operator."""


def _open_text(path: Path) -> Iterator[str]:
    if not path.exists():
        raise IngestError(f"file not found: {path}")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        yield from fh


_TITLE_PREFIX = re.compile(r"^\s*Стаття\s+[0-9A-Za-zІіVX\-]+\.?\s*")


def _heading(rec: dict[str, Any]) -> str | None:
    """The core file has ``article_heading``; the scale file has ``title`` = "Стаття 2. <heading>"."""
    heading = rec.get("article_heading")
    if heading:
        return str(heading)
    title = _TITLE_PREFIX.sub("", str(rec.get("title") or "")).strip()
    return title or None


def count_lines(path: Path) -> int:
    """The progress bar's total: a cheap pass (51k gzipped lines read in about a second)."""
    return sum(1 for line in _open_text(path) if line.strip())


def read_articles(path: Path, *, acts: set[str] | None = None, limit: int | None = None,
                  canonical: dict[str, str] | None = None,
                  names: dict[str, tuple[str, str | None]] | None = None) -> Iterator[Article]:
    """Stream articles from the corpus JSONL (core or scale format) without holding the file in memory.
    ``canonical`` maps a corpus id that is not an nreg ("ЗУ ЕК", case-folded) to the act's nreg (1089-20);
    ``names`` gives the catalog's title and abbreviation of an act (by case-folded nreg) for records that carry a
    placeholder title."""
    wanted = {a.lower() for a in acts} if acts else None
    canonical = canonical or {}
    names = names or {}
    n = 0
    seen: dict[tuple[str, str], int] = {}  # one small entry per article: bounded by the file, not by its text
    for lineno, line in enumerate(_open_text(path), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            nreg, article, text = rec["act_nreg"], str(rec["article"]), rec["text"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise IngestError(f"{path}:{lineno}: not a corpus record ({exc})") from exc
        nreg = canonical.get(str(nreg).lower(), nreg)
        if wanted is not None and nreg.lower() not in wanted and str(rec["act_nreg"]).lower() not in wanted:
            continue
        if not text or not text.strip():
            continue
        occurrence = seen[(nreg.lower(), article)] = seen.get((nreg.lower(), article), 0) + 1
        title, abbrev = rec.get("act_title"), rec.get("act_abbrev")
        if is_placeholder_title(title) and nreg.lower() in names:
            title, catalog_abbrev = names[nreg.lower()]
            abbrev = abbrev or catalog_abbrev
        yield Article(
            act_nreg=nreg,
            act_title=title or f"Акт {nreg}",
            act_abbrev=abbrev,
            article=article,
            heading=_heading(rec),
            text=text,
            url=rec.get("url") or "",
            occurrence=occurrence,
        )
        n += 1
        if limit is not None and n >= limit:
            return


def chunk_header(a: Article) -> str:
    return f"{a.act_title}. Стаття {a.article}." + (f" {a.heading}." if a.heading else "")


def embedding_text(chunk: Chunk) -> str:
    """What the lexical signal indexes: the act title and heading make every chunk findable by them."""
    return f"{chunk_header(chunk.article)} {chunk.text}"


def dense_text(article: Article, head_chars: int) -> str:
    """What the dense model sees, once per article: title, heading and the opening of the text. The model's
    cost grows faster than linearly with length, and an article's opening says what it is about."""
    return f"{chunk_header(article)} {article.text[:head_chars]}"


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
        "text_sig": a.text_signature,
    }


@dataclass
class IngestReport:
    articles: int = 0
    chunks: int = 0
    upserted: int = 0
    skipped_existing: int = 0
    terms: int = 0
    batches: int = 0
    vectors_cached: int = 0  # dense vectors found in the embedding cache instead of embedded
    seconds: float = 0.0
    stopped_early: bool = False
    acts: dict[str, int] = field(default_factory=dict)


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


def chunk_snippet_key(c: Chunk) -> str:
    return snippet_key(act_nreg=c.article.act_nreg, article=c.article.storage_id, ordinal=c.ordinal)


def term_points(chunks: list[Chunk]) -> list[tuple[str, Sparse, dict[str, Any]]]:
    """The article's defined terms as points of the terms collection, each carrying the payload of the chunk
    that holds its definition (so a hit opens that chunk's snippet)."""
    a = chunks[0].article
    out = []
    for t in extract_terms(a.text, a.heading):
        line = normalize(a.text[t.offset:].split("\n", 1)[0])[:60]
        chunk = next((c for c in chunks if line in c.text), chunks[0])
        vec = document_vector(t.term, TERM_AVGDL)
        if not vec.indices:
            continue
        payload = {**chunk_payload(chunk, chunk_snippet_key(chunk)), "term": t.term, "term_key": t.key,
                   "announced": t.announced}
        out.append((f"{chunk.chunk_key}#t{t.key}", vec, payload))
    return out


def _forget_corpus_ids(client: Any, collection: str, canonical: dict[str, str]) -> None:
    """An ingest before the catalog knew a corpus id stored its act under that id ("ЗУ ЕК" instead of 1089-20):
    those points and the Act row it made are dropped, and this ingest stores the act under its nreg."""
    if not canonical:
        return
    stale = list(Act.objects.filter(nreg_key__in=list(canonical)).values_list("nreg_key", flat=True))
    for key in stale:
        index.delete_act(client, collection, key)
        index.delete_act(client, settings.LLDBI_TERMS_COLLECTION, key)
        logger.info("corpus id replaced by the act's nreg", extra={"corpus_id": key, "nreg": canonical[key]})
    if stale:
        Act.objects.filter(nreg_key__in=stale).delete()
        searchindex.invalidate(collection)
        termindex.invalidate(settings.LLDBI_TERMS_COLLECTION)


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
    """Chunk, embed and upsert in bounded batches; safe to re-run: point ids and snippet keys are deterministic,
    and articles already in the collection are skipped, so an interrupted ingest continues where it stopped
    (``max_batches`` stops on purpose after that many written batches).

    Memory stays bounded by one batch: the file is streamed and only per-act counters are kept."""
    embedder = embedder or default_embedder()
    store = store or SnippetStore()
    client = index.get_client()
    collection = settings.LLDBI_COLLECTION
    index.ensure_collection(client, collection, embedder.dim, payload_indexes=bool(settings.QDRANT_URL))
    index.ensure_terms_collection(client, settings.LLDBI_TERMS_COLLECTION, payload_indexes=bool(settings.QDRANT_URL))
    with_heading = index.has_sparse(client, collection, index.HEADING)  # older collections go on without it
    vector_cache = VectorCache(embedder.name, settings.EMBEDDING_CACHE_DIRS)
    report = IngestReport()
    titles: dict[str, tuple[str, str | None]] = {}
    total = None
    if show_progress and limit is None and acts is None:
        total = count_lines(path)
    progress = Progress("ingest_laws articles", total=total or limit) if show_progress else None
    max_chunks = settings.ARTICLE_MAX_CHUNKS
    # The catalog's nregs for corpus ids; an ingest told to leave the catalog alone reads none of it either.
    canonical = act_corpus_ids() if update_catalog else {}
    names = act_names() if update_catalog else {}
    _forget_corpus_ids(client, collection, canonical)

    def articles() -> Iterator[list[Chunk]]:
        for article in read_articles(path, acts=acts, limit=limit, canonical=canonical, names=names):
            report.articles += 1
            titles[article.act_nreg] = (article.act_title, article.act_abbrev)
            yield split_article(article, max_chars=settings.CHUNK_MAX_CHARS,
                                overlap_chars=settings.CHUNK_OVERLAP_CHARS)[:max_chunks]

    for batch in _article_batches(articles(), batch_size or settings.EMBED_BATCH_SIZE):
        for chunks in batch:
            nreg = chunks[0].article.act_nreg
            report.acts[nreg] = report.acts.get(nreg, 0) + len(chunks)
            report.chunks += len(chunks)
        present = index.existing_ids(client, collection, [index.point_id(cs[-1].chunk_key) for cs in batch])
        todo = [cs for cs in batch if index.point_id(cs[-1].chunk_key) not in present]
        report.skipped_existing += sum(len(cs) for cs in batch) - sum(len(cs) for cs in todo)
        if todo:
            heads, cached = embed_with_cache(
                embedder, [dense_text(cs[0].article, settings.DENSE_HEAD_CHARS) for cs in todo], vector_cache)
            report.vectors_cached += cached
            points = []
            for chunks, head in zip(todo, heads, strict=True):
                for c in chunks:
                    key = chunk_snippet_key(c)
                    store.put(key, c.text)  # the text first: a point never refers to a missing snippet
                    first = c.ordinal == 0
                    points.append(index.IndexedPoint(c.chunk_key, head.tolist() if first else None,
                                                     document_vector(embedding_text(c)), chunk_payload(c, key),
                                                     heading_vector(c.article.heading)
                                                     if first and with_heading else None))
            index.upsert(client, collection, points)
            searchindex.invalidate(collection)
            report.upserted += len(points)
            report.batches += 1
        # Terms for every article of the batch, indexed or not: cheap (no embeddings), and it backfills the terms
        # of a collection ingested before they existed. Point ids are deterministic: a re-run overwrites.
        terms = [p for chunks in batch for p in term_points(chunks)]
        if terms:
            index.upsert_terms(client, settings.LLDBI_TERMS_COLLECTION, terms)
            termindex.invalidate(settings.LLDBI_TERMS_COLLECTION)
            report.terms += len(terms)
        if progress:
            progress.advance(len(batch), note=f"chunks={report.chunks} new={report.upserted}")
        if max_batches is not None and report.batches >= max_batches:
            report.stopped_early = True
            break
    if progress:
        report.seconds = progress.finish(note=f"chunks={report.chunks} new={report.upserted}")
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


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for lineno, line in enumerate(_open_text(path), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise IngestError(f"{path}:{lineno}: not JSON ({exc.msg})") from exc
        if not isinstance(rec, dict) or not rec.get("nreg"):
            raise IngestError(f"{path}:{lineno}: a catalog record needs an nreg")
        yield lineno, rec


_NAME_HEADS = ("кодекс", "конституці", "статут")  # a code's name ends with its owner or with its head noun


def _official_number_fits(form: str, nreg: str) -> bool:
    """"1000-V" cites 1000-16 (V convocation): the number must be the nreg's, else the crossref is noise."""
    m = re.fullmatch(r"(\d+)-([IVXLC]+)", form)
    return m is not None and nreg.split("-")[0] == m.group(1)


def crossref_usable(rec: dict[str, Any], has_title: bool) -> bool:
    """act_name_crossrefs.jsonl is mined from texts and noisy (captures cut mid-sentence, numbers that are not
    acts): keep official numbers that agree with the nreg, «Про …» titles, and code names that start a name
    (capital letter), end as a name does, are short and have no clause in them; single sightings only fill a
    missing title."""
    form, kind, count = str(rec.get("form") or ""), rec.get("kind"), int(rec.get("count") or 0)
    if kind == "official_number":
        return _official_number_fits(form, str(rec["nreg"]))
    if kind == "quoted_title":
        return form.startswith("Про ") and 12 <= len(form) <= 250 and (count >= 2 or not has_title)
    if kind == "code_or_constitution_name":
        last = form.split()[-1] if form.split() else ""
        ends_as_name = last in ("України", "РСР", "УРСР") or last.lower().startswith(_NAME_HEADS)
        return (form[:1].isupper() and "," not in form and len(form.split()) <= 8 and count >= 2
                and any(h in form.lower() for h in _NAME_HEADS) and ends_as_name)
    return False


def catalog_load(*, acts_path: Path | None, aliases_path: Path | None, crossrefs_path: Path | None = None) -> int:
    """Load the DocList catalog into the Act table (acts, abbreviations and aliases, then the usable crossrefs);
    keeps ``indexed`` as is. Returns the number of records applied."""
    existing = {a.nreg_key: a for a in Act.objects.all()}
    touched: dict[str, Act] = {}
    n = 0

    def act_for(nreg: str) -> Act:
        key = nreg.lower()
        act = touched.get(key) or existing.get(key)
        if act is None:
            act = Act(nreg=nreg, nreg_key=key, abbreviations=[], aliases=[], official_numbers=[], corpus_ids=[])
        touched[key] = act
        return act

    if acts_path is not None:
        for _, rec in _jsonl(acts_path):
            act = act_for(rec["nreg"])
            act.title = rec.get("title") or act.title
            act.abbreviations = sorted(set(act.abbreviations) | set(rec.get("abbreviations") or []))
            corpus_id = str(rec.get("ansvar_short_name") or "")  # the corpus files' own id for the act
            if corpus_id and corpus_id.lower() != act.nreg_key and corpus_id not in act.corpus_ids:
                act.corpus_ids = [*act.corpus_ids, corpus_id]
            n += 1
    if aliases_path is not None:
        for _, rec in _jsonl(aliases_path):
            act = act_for(rec["nreg"])
            name = str(rec.get("alias") or "")
            if rec.get("full_name") and not act.title:
                act.title = rec["full_name"]
            if _is_abbreviation(name):
                if name not in act.abbreviations:
                    act.abbreviations = [*act.abbreviations, name]
            elif name and name.lower() not in act.aliases:
                act.aliases = [*act.aliases, name.lower()]
            n += 1
    if crossrefs_path is not None:
        # A crossref never gives an act the name of another act ("Цивільного кодексу України" in a 1990 text
        # means the old code; today it names 435-15): names that are already another act's title are dropped.
        titled: dict[tuple[str, ...], str] = {}
        for a in [*existing.values(), *touched.values()]:
            if a.title:
                titled.setdefault(lemma_seq(a.title), a.nreg_key)
        for _, rec in _jsonl(crossrefs_path):
            key = str(rec["nreg"]).lower()
            if key not in touched and key not in existing:
                continue  # a crossref never invents an act: the catalog says which acts exist
            act = act_for(rec["nreg"])
            if not crossref_usable(rec, bool(act.title)):
                continue
            form = str(rec["form"])
            if rec["kind"] != "official_number" and titled.get(lemma_seq(form), key) != key:
                continue
            if rec["kind"] == "official_number":
                if form not in act.official_numbers:
                    act.official_numbers = [*act.official_numbers, form]
            elif rec["kind"] == "quoted_title" and not act.title:
                act.title = form
            elif form.lower() not in act.aliases and lemma_seq(form) != lemma_seq(act.title):
                act.aliases = [*act.aliases, form.lower()]
            n += 1
    new = [a for a in touched.values() if a.pk is None]
    old = [a for a in touched.values() if a.pk is not None]
    Act.objects.bulk_create(new, batch_size=500)
    Act.objects.bulk_update(old, ["title", "abbreviations", "aliases", "official_numbers", "corpus_ids"],
                            batch_size=500)
    if old:  # bulk_update skips auto_now: touch the stamp the lexicon cache keys on
        old[0].save(update_fields=["updated_at"])
    return n
