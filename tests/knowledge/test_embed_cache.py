"""The embedding cache (knowledge/embed_cache.py): a vector is looked up by the exact text it embeds, with the real
model; a changed text or another model is a miss, never a stale vector."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from knowledge.embed_cache import VectorCache, cache_file, embed_with_cache, write_cache
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


def test_another_models_cache_is_never_used(tmp_path: Path) -> None:
    model = Counting(default_embedder())
    write_cache(cache_file(tmp_path, model.name), "some-other-model", TEXTS, np.ones((2, model.dim)))
    _, hits = embed_with_cache(model, TEXTS, VectorCache(model.name, [tmp_path]))
    assert hits == 0 and model.embedded == 2
