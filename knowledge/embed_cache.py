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
from pathlib import Path

import numpy as np

from knowledge.embeddings import Embedder

logger = logging.getLogger(__name__)


DIGEST_BYTES = 20  # SHA-1


def text_digest(model: str, text: str) -> bytes:
    return hashlib.sha1(f"{model}\n{text}".encode()).digest()


def cache_file(directory: Path, model: str) -> Path:
    return directory / f"embeddings.{model}.npz"


class VectorCache:
    """Read-only vectors of one model from the cache files found in ``directories``."""

    def __init__(self, model: str, directories: Iterable[Path]) -> None:
        self.model = model
        self._rows: dict[bytes, np.ndarray] = {}
        for directory in directories:
            path = cache_file(Path(directory), model)
            if not path.exists():
                continue
            with np.load(path) as data:
                digests, vectors = data["digests"], data["vectors"]
            # numpy's fixed-width bytes drop trailing NULs when read back: a digest ending in 0x00 (1 in 256, 32 of
            # the core corpus's 8,101) would never be found again without its padding restored
            self._rows.update((bytes(d).ljust(DIGEST_BYTES, b"\0"), v) for d, v in zip(digests, vectors, strict=True))
            logger.info("embedding cache loaded", extra={"path": str(path), "vectors": len(digests)})

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, text: str) -> np.ndarray | None:
        return self._rows.get(text_digest(self.model, text))


def embed_with_cache(embedder: Embedder, texts: list[str], cache: VectorCache | None) -> tuple[np.ndarray, int]:
    """Passage vectors for ``texts`` (cached ones looked up, the rest embedded in one call), and the hit count."""
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    usable = cache is not None and cache.model == embedder.name
    found = [cache.get(t) if usable and cache is not None else None for t in texts]
    misses = [i for i, v in enumerate(found) if v is None]
    if misses:
        out[misses] = embedder.embed([texts[i] for i in misses])
    for i, v in enumerate(found):
        if v is not None:
            out[i] = v
    return out, len(texts) - len(misses)


def write_cache(path: Path, model: str, texts: list[str], vectors: np.ndarray) -> None:
    digests = np.asarray([text_digest(model, t) for t in texts], dtype=f"S{DIGEST_BYTES}")
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, digests=digests, vectors=np.asarray(vectors, dtype=np.float32))
