"""Dense vectors computed once, looked up by the exact text they embed.

multilingual-e5 is the dense model that bridges a lay question and the statute's words, and it costs ~0.1 s per
article on two cores. A vector is a pure function of (model, text), so ingest first looks each article's dense text
up here and embeds only the misses: a re-ingest, a resumed ingest and the shipped demo corpus (whose vectors ship
beside it, ``knowledge/demo_corpus/embeddings.<model>.npz``) cost no model time. A changed text or model is a miss,
never a stale vector.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from functools import cached_property, lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

from knowledge.embeddings import Embedder, SentenceVectors, default_embedder

logger = logging.getLogger(__name__)


DIGEST_BYTES = 20  # SHA-1


def text_digest(model: str, text: str) -> bytes:
    return hashlib.sha1(f"{model}\n{text}".encode()).digest()


# What a cache file holds: each article's dense text ("embeddings"), or each of its first sentences ("sentences":
# U4's meaning rerank, knowledge/index.py SENTENCES)
ARTICLES, SENTENCES = "embeddings", "sentences"


def cache_file(directory: Path, model: str, kind: str = ARTICLES) -> Path:
    return directory / f"{kind}.{model}.npz"


class _Block(NamedTuple):
    """One file's rows as stored: float32, or int8 with one scale each (``write_cache(..., quantized=True)``), kept
    so and widened one row at a time (the ~75,000 shipped sentence vectors: 29 MB instead of 115 MB a process), with
    the digests sorted for a binary search (a dict of 75,000 digests took ~0.1 s of every process's first answer)."""

    rows: np.ndarray
    scales: np.ndarray | None
    digests: np.ndarray  # S20, sorted
    order: np.ndarray | None  # row of each sorted digest; None when the file stores its rows in digest order

    def find(self, digest: np.bytes_) -> int | None:
        i = int(np.searchsorted(self.digests, digest))
        if i == len(self.digests) or self.digests[i] != digest:
            return None
        return i if self.order is None else int(self.order[i])

    def row(self, i: int) -> np.ndarray:
        if self.scales is None:
            return self.rows[i]
        return self.rows[i].astype(np.float32) * self.scales[i]


def _block(data: np.lib.npyio.NpzFile) -> _Block:
    digests = data["digests"]
    scales = data["scales"].astype(np.float32) if "scales" in data.files else None
    rows = data["vectors"] if scales is not None else np.asarray(data["vectors"], dtype=np.float32)
    if len(digests) < 2 or bool(np.all(digests[1:] >= digests[:-1])):
        return _Block(rows, scales, digests, None)
    order = np.argsort(digests, kind="stable")
    return _Block(rows, scales, digests[order], order)


class VectorCache:
    """Read-only vectors of one model from the cache files found in ``directories`` (a text in two files: the
    later directory's vector)."""

    def __init__(self, model: str, directories: Iterable[Path], kind: str = ARTICLES) -> None:
        self.model = model
        self._blocks: list[_Block] = []
        for directory in directories:
            path = cache_file(Path(directory), model, kind)
            if not path.exists():
                continue
            with np.load(path) as data:
                self._blocks.append(_block(data))
            logger.info("embedding cache loaded", extra={"path": str(path), "vectors": len(self._blocks[-1].digests)})

    @cached_property
    def _size(self) -> int:
        return len(np.unique(np.concatenate([b.digests for b in self._blocks]))) if self._blocks else 0

    def __len__(self) -> int:
        return self._size

    def get(self, text: str) -> np.ndarray | None:
        # as the stored digests read back: numpy's fixed-width bytes drop trailing NULs (a digest ending in 0x00, 1
        # in 256, compares equal only in that form)
        digest = np.asarray([text_digest(self.model, text)], dtype=f"S{DIGEST_BYTES}")[0]
        for block in reversed(self._blocks):
            found = block.find(digest)
            if found is not None:
                return block.row(found)
        return None


def embed_with_cache(embedder: Embedder, texts: list[str], cache: VectorCache | None) -> tuple[np.ndarray, int]:
    """Passage vectors for ``texts`` (cached ones looked up, the rest embedded in one call), and the hit count.
    A text asked for twice is embedded once: statutes repeat their boilerplate (a batch of the 51k corpus holds ~8 %
    repeated sentences), and the vector is a function of the text alone."""
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    usable = cache is not None and cache.model == embedder.name
    found = [cache.get(t) if usable and cache is not None else None for t in texts]
    misses = [i for i, v in enumerate(found) if v is None]
    if misses:
        distinct = list(dict.fromkeys(texts[i] for i in misses))
        row = {text: n for n, text in enumerate(distinct)}
        embedded = embedder.embed(distinct)
        out[misses] = embedded[[row[texts[i]] for i in misses]]
    for i, v in enumerate(found):
        if v is not None:
            out[i] = v
    return out, len(texts) - len(misses)


def write_cache(path: Path, model: str, texts: list[str], vectors: np.ndarray, *, quantized: bool = False) -> None:
    """``quantized``: each row as int8 times its own scale (max |x| / 127) — a quarter of the bytes, cosines within
    ~1e-3 of the float vectors': what the ~40,000 shipped sentence vectors are stored as."""
    digests = np.asarray([text_digest(model, t) for t in texts], dtype=f"S{DIGEST_BYTES}")
    order = np.argsort(digests, kind="stable")  # stored in digest order: a reader searches without sorting
    digests = digests[order]
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = np.asarray(vectors, dtype=np.float32)[order]
    if not quantized:
        np.savez_compressed(path, digests=digests, vectors=rows)
        return
    scales = np.maximum(np.abs(rows).max(axis=1, initial=0.0), 1e-12) / 127.0
    codes = np.clip(np.rint(rows / scales[:, None]), -127, 127).astype(np.int8)
    # int8 codes do not compress (29.1 MB either way for the core's sentences): stored, they are read in ~15 ms
    # instead of inflated in ~140 ms by every process's first answer
    np.savez(path, digests=digests, vectors=codes, scales=scales.astype(np.float32))


@lru_cache(maxsize=1)
def _sentence_vectors() -> SentenceVectors:
    from django.conf import settings

    embedder = default_embedder()
    # ingest stores a vector for each of an article's first sentences, split as the writer splits them: the same
    # sentence in the evidence is found by its text instead of embedded again (most of an answer's ~1.3 s of e5)
    known = VectorCache(embedder.name, settings.EMBEDDING_CACHE_DIRS, SENTENCES)
    return SentenceVectors(embedder, known=known.get if len(known) else None)


def sentence_similarity(question: str, sentences: list[str]) -> list[float]:
    """The process's model (loaded on first use), its sentence cache and the shipped sentence vectors."""
    return _sentence_vectors().similarity(question, sentences)
