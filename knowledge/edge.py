"""Qdrant Edge shards: a collection copied into files that any number of processes open read-only in milliseconds.

The local-path Qdrant (qdrant-client's local mode) stays where ingest writes, but it is a Python dict of every point:
opening it takes seconds (19 s at 51k), one process only may hold it, and it scores point by point in Python. Qdrant
Edge is Qdrant's own engine in-process: a shard built once from the collection (``build_shard``) is opened by every
reader (``open_shard``) without a lock and answers with the server's scoring (cosine dense, BM25 with the IDF
modifier, payload filters).

A shard is never written after it is built. A build writes a new generation beside the old one and then replaces
the ``CURRENT`` file naming it, so a reader in another process sees the whole old shard or the whole new one and
picks the new one up on its next search. The manifest records the engine version that wrote the files and their
layout: a shard of another version or layout is rebuilt (``manage.py build_search_shards`` after an upgrade) instead
of being opened.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import shutil
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import qdrant_edge as qe
from django.conf import settings

from knowledge import index

if TYPE_CHECKING:
    from qdrant_client import QdrantClient, models
else:
    from knowledge.qdrant_models import models  # imported when first used: see there

logger = logging.getLogger(__name__)

EDGE_PACKAGE = "qdrant-edge-py"
CURRENT = "CURRENT"  # the generation readers open, replaced atomically by a build
MANIFEST = "manifest.json"


# What a shard's files hold beyond the collection's vectors. 2: each plain dense vector has an int8 copy, scanned
# first (searchindex.LocalSearchIndex.dense_search). 3: the int8 copies are mapped, not copied into each process's
# RAM (``_edge_dense``). A shard of another layout is rebuilt like one of another engine version.
SHARD_LAYOUT = 3


class ShardOutdated(Exception):
    """The shard was written by another qdrant-edge version or in another layout: rebuild it from the collection."""


def outdated(manifest: dict[str, Any]) -> str | None:
    """Why a shard with this manifest must be rebuilt before it is searched; None: it need not be."""
    if manifest.get("edge_version") != edge_version():
        return f"built by qdrant-edge {manifest.get('edge_version')}, this is {edge_version()}"
    if manifest.get("layout", 1) != SHARD_LAYOUT:
        return f"built in layout {manifest.get('layout', 1)}, this code reads layout {SHARD_LAYOUT}"
    return None


BACKENDS = ("auto", "qdrant", "edge")


def search_backend(setting: str | None = None) -> str:
    """What answers searches: ``qdrant`` (the collection itself: a Qdrant server, or the local mode in the parity
    tests) or ``edge`` (the shards). ``auto``: the server with QDRANT_URL, else the shards."""
    backend = setting or settings.LLDBI_SEARCH
    if backend not in BACKENDS:
        raise ValueError(f"LLDBI_SEARCH must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "auto":
        return "qdrant" if settings.QDRANT_URL else "edge"
    return backend


def edge_version() -> str:
    return importlib.metadata.version(EDGE_PACKAGE)


def shard_root(collection: str) -> Path:
    return Path(settings.LLDBI_SHARDS_DIR) / collection


@dataclass(frozen=True)
class Shard:
    """An open shard and the named vectors it holds (a collection from before a vector existed lacks it)."""

    engine: qe.EdgeShard
    generation: str
    vectors: frozenset[str]


def _edge_config(client: QdrantClient, collection: str) -> qe.EdgeConfig:
    """Every named dense and sparse vector of the collection, as the collection defines it (knowledge/index.py):
    a vector added there is carried into the shard with no change here."""
    params = client.get_collection(collection).config.params
    dense = params.vectors if isinstance(params.vectors, dict) else {}
    sparse = params.sparse_vectors or {}
    return qe.EdgeConfig(
        vectors={name: _edge_dense(v) for name, v in dense.items()},
        sparse_vectors={name: qe.EdgeSparseVectorParams(
            modifier=qe.Modifier.Idf if s.modifier == models.Modifier.IDF else None) for name, s in sparse.items()},
        # no WAL: a shard is written once, flushed, and then only read, which is what lets several processes open it
        wal_enabled=False,
        # no HNSW graph (m=0; the other two numbers are required and unused without one): dense search is a scan,
        # ranking as qdrant-client's local mode does (int8 copies scanned, the best rescored: ``_edge_dense``).
        # The optimizer still turns the appendable segment into an immutable one (a threshold of 1 KB): its sparse
        # inverted indexes are then files mapped on open instead of being rebuilt in RAM by every process.
        hnsw_config=qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10),
        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=1),
        max_search_threads=settings.LLDBI_EDGE_SEARCH_THREADS,
    )


DENSE_INT8_QUANTILE = 0.99  # the int8 range covers this share of the values; the rescoring corrects the rest


def _edge_dense(params: models.VectorParams) -> qe.EdgeVectorParams:
    distance = getattr(qe.Distance, params.distance.value)
    if params.multivector_config is None:
        # an int8 copy of every vector (a quarter of the float32 bytes) is scanned first and the best
        # LLDBI_DENSE_OVERSAMPLING × limit rescored with the float32 vectors: the same list and scores as the exact
        # scan (README "Speed", session 26), which at 51k was the largest search of U4. The copies are mapped
        # ("cold"), not copied into RAM on open: the copy dropped the file from the page cache first and read it back
        # page fault by page fault, 1.6–1.9 s of every process opening the 51k shard (65 MB); mapped, each process
        # shares the page cache and ``_warm`` reads the file in one pass (README "Speed", session 27).
        return qe.EdgeVectorParams(size=params.size, distance=distance, quantization_config=qe.ScalarQuantizationConfig(
            type=qe.ScalarType.Int8, quantile=DENSE_INT8_QUANTILE, memory=qe.Memory.Cold))
    # the sentence vectors (knowledge/index.py SENTENCES): an article matches by its best sentence. Stored as float16:
    # U4 scans all ~44,500 of them for every question, and float32 made that 68 MB of every searching process's RSS
    # (`ask` 491 -> 560 MB); cosines move by ~1e-4, eval/natural dev by one question's hit@3 (README, session 11).
    comparator = {"max_sim": qe.MultiVectorComparator.MaxSim}[params.multivector_config.comparator.value]
    return qe.EdgeVectorParams(size=params.size, distance=distance, datatype=qe.VectorStorageDatatype.Float16,
                               multivector_config=qe.MultiVectorConfig(comparator=comparator),
                               on_disk=params.on_disk)


def _edge_vector(vector: Any) -> Any:
    if isinstance(vector, models.SparseVector):
        return qe.SparseVector(indices=list(vector.indices), values=list(vector.values))
    return vector


def _edge_points(records: Iterable[models.Record]) -> Iterator[qe.Point]:
    for r in records:
        vectors = r.vector if isinstance(r.vector, dict) else {}
        yield qe.Point(id=str(r.id), vector={name: _edge_vector(v) for name, v in vectors.items()},
                       payload=dict(r.payload or {}))


def _batches(points: Iterator[qe.Point], size: int) -> Iterator[list[qe.Point]]:
    batch: list[qe.Point] = []
    for p in points:
        batch.append(p)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def build_shard(client: QdrantClient, collection: str, keyword_fields: Iterable[str]) -> Path | None:
    """Copy the collection into a new shard generation and make it current; None: no such collection."""
    if not client.collection_exists(collection):
        return None
    started = time.monotonic()
    root = shard_root(collection)
    # names sort in build order (pruning keeps the newest), microseconds apart even for builds in one second
    generation = f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%S%f')}-{uuid.uuid4().hex[:6]}"
    path = root / generation
    config = _edge_config(client, collection)
    shard = qe.EdgeShard.create(str(path / "shard"), config)
    n = 0
    try:
        for batch in _batches(_edge_points(index.scan_records(client, collection)), settings.LLDBI_SHARD_BUILD_BATCH):
            shard.update(qe.UpdateOperation.upsert_points(batch))
            n += len(batch)
        for field in keyword_fields:  # the act filter and the exact lookups read these indexes, not every payload
            shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
        shard.optimize()  # one optimized segment: opened by mapping its files, no replay
        shard.flush()
    finally:
        shard.close()
    # The first open completes the files it finds (the config's resolved defaults, the segment's version); later
    # opens leave their bytes as they are. Done here, before any reader sees the generation.
    qe.EdgeShard.load(str(path / "shard")).close()
    (path / MANIFEST).write_text(json.dumps({"collection": collection, "points": n, "edge_version": edge_version(),
                                             "layout": SHARD_LAYOUT,
                                             "vectors": sorted([*config.vectors, *config.sparse_vectors])}))
    tmp = root / f".{CURRENT}.{generation}"
    tmp.write_text(generation)
    tmp.replace(root / CURRENT)  # atomic: a reader sees the old generation or the new one, never half of one
    _prune(root, keep=generation)
    logger.info("search shard built", extra={"collection": collection, "points": n, "generation": generation,
                                             "seconds": round(time.monotonic() - started, 1)})
    return path


def _prune(root: Path, keep: str) -> None:
    """Drop generations older than the one before ``keep``: a reader may still be searching the previous one."""
    olds = sorted(p for p in root.iterdir() if p.is_dir() and p.name != keep)
    for old in olds[:-settings.LLDBI_SHARD_GENERATIONS_KEPT] if settings.LLDBI_SHARD_GENERATIONS_KEPT else olds:
        shutil.rmtree(old, ignore_errors=True)


class _Opened:
    """The shards this process has open, one per collection, with the generation each one is."""

    def __init__(self) -> None:
        self.shards: dict[str, Shard] = {}  # by the shard's directory
        self.lock = threading.Lock()


_opened = _Opened()


def current_generation(collection: str) -> str | None:
    try:
        return (shard_root(collection) / CURRENT).read_text().strip() or None
    except FileNotFoundError:
        return None


def open_shard(collection: str) -> Shard | None:
    """The collection's current shard, opened once per generation; None: no shard was built.

    Reading ``CURRENT`` on every call (a few microseconds) is how a worker picks up the shard an ingest in another
    process just built. The previous generation is not closed: a search in another thread may still be using it."""
    generation = current_generation(collection)
    if generation is None:
        return None
    root = shard_root(collection)
    with _opened.lock:
        have = _opened.shards.get(str(root))
        if have is not None and have.generation == generation:
            return have
        path = root / generation
        manifest = json.loads((path / MANIFEST).read_text())
        why = outdated(manifest)
        if why:
            raise ShardOutdated(f"the {collection!r} shard was {why}: run manage.py build_search_shards")
        shard = Shard(qe.EdgeShard.load(str(path / "shard")), generation, frozenset(manifest.get("vectors", ())))
        _warm(path / "shard")
        _opened.shards[str(root)] = shard
        return shard


WARM_READ_BYTES = 4 << 20
# The files every dense search scans whole (the int8 copies): read once in large blocks after the open, so that the
# first question does not read them page fault by page fault (0.7 s at 51k, against 0.02 s read so).
_SCANNED_WHOLE = "segments/*/vector_storage-*/quantized.data"


def _warm(shard_dir: Path) -> None:
    for path in shard_dir.glob(_SCANNED_WHOLE):
        try:
            with path.open("rb", buffering=0) as f:
                while f.read(WARM_READ_BYTES):
                    pass
        except OSError:  # a warm-up only: the search reads what it needs either way
            logger.warning("search shard file not warmed", extra={"path": str(path)}, exc_info=True)


_build_lock = threading.Lock()


def ensure_shard(collection: str, keyword_fields: Iterable[str]) -> Shard | None:
    """The current shard, built from the collection first when there is none or another engine version wrote it
    (a collection ingested before the shards existed; an upgrade deployed without build_search_shards). None: the
    collection does not exist either. A local path this process opened only to build is closed again, so that
    another worker can build or ingest next."""
    try:
        shard = open_shard(collection)
    except ShardOutdated:
        logger.warning("search shard of another qdrant-edge version or layout: rebuilding",
                       extra={"collection": collection})
        shard = None
    if shard is not None:
        return shard
    with _build_lock:
        held = index.held_client() is not None
        try:
            built = build_shard(index.get_client(), collection, keyword_fields)
        finally:
            if not held:
                index.close_client()
    return open_shard(collection) if built is not None else None


def forget(collection: str) -> None:
    """Open the collection's shard again on the next search, as after a rebuild (a test that rewrote a manifest)."""
    with _opened.lock:
        _opened.shards.pop(str(shard_root(collection)), None)
