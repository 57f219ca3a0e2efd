"""What a chunk becomes in the collections: its payload (the refs the RunContext keeps), its snippet key, its
point in LLDBI, and the points of the terms its article defines."""

from __future__ import annotations

from typing import Any

from knowledge.index import IndexedPoint
from knowledge.ingest.corpus import embedding_text
from knowledge.lexical import Sparse, document_vector, heading_vector
from knowledge.snippets import snippet_key
from legaltext.chunking import Chunk
from legaltext.definitions import TERM_AVGDL, extract_terms
from legaltext.text import normalize


def chunk_snippet_key(c: Chunk) -> str:
    return snippet_key(act_nreg=c.article.act_nreg, article=c.article.storage_id, ordinal=c.ordinal)


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


def chunk_point(c: Chunk, key: str, head: list[float], *, with_heading: bool,
                sentences: list[list[float]] | None = None,
                questions: list[list[float]] | None = None,
                question_words: Sparse | None = None) -> IndexedPoint:
    """The article's first chunk carries its dense vector (``head``), its sentences' vectors, its lay questions'
    (also among the sentences') and, when the collection has the field, its heading's BM25 vector; every chunk
    carries the BM25 vector of its text."""
    first = c.ordinal == 0
    return IndexedPoint(c.chunk_key, head if first else None, document_vector(embedding_text(c)),
                        chunk_payload(c, key), heading_vector(c.article.heading) if first and with_heading else None,
                        sentences if first else None, questions if first else None,
                        question_words if first else None)


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
