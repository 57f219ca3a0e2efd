"""One Qdrant Edge shard per user document (documents/shards.py): it ranks as a Qdrant collection holding the same
documents does (qdrant-client's local mode, the server's engine), is built once and never overwritten by a second
build, is searched by another process while this one has it open, and goes with its document."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from documents import index as docs_index
from documents import shards
from knowledge import index
from knowledge.embeddings import default_embedder
from knowledge.lexical import document_vector, query_vector

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [
    ["Договір оренди квартири № 7.", "Орендар сплачує орендну плату щомісяця до п'ятого числа.",
     "За прострочення оплати орендар сплачує штраф у розмірі 5 відсотків від суми боргу за кожен день."],
    ["Трудовий договір з працівником.", "Працівнику надається щорічна відпустка тривалістю 24 календарні дні.",
     "Заробітна плата виплачується двічі на місяць."],
    ["Договір позики.", "Позичальник повертає суму позики до кінця року.",
     "За прострочення повернення позики позичальник сплачує пеню."],
]
QUESTIONS = ["Що сказано про штраф за прострочення оплати?", "скільки днів відпустки",
             "коли повертати позику", "договір"]


@pytest.fixture
def shards_dir(tmp_path: Path, settings: Any) -> Path:
    settings.DOCS_SHARDS_DIR = tmp_path / "docs"
    return settings.DOCS_SHARDS_DIR


def _points(document_id: str, texts: list[str], user_ref: str = "u1") -> list[docs_index.DocPoint]:
    dense = default_embedder().embed(texts)
    return [docs_index.DocPoint(chunk_key=f"doc#{document_id}#c{i}", dense=dense[i].tolist(),
                                sparse=document_vector(t), payload={
                                    "org_id": 1, "user_ref": user_ref, "document_id": document_id, "ordinal": i,
                                    "text": t}) for i, t in enumerate(texts)]


def _search(ids: list[str], question: str, limit: int = 5) -> list[tuple[dict[str, Any], float]]:
    embedder = default_embedder()
    return shards.search(ids, dense=embedder.embed_query([question])[0].tolist(), sparse=query_vector(question),
                         embed_model=embedder.name, limit=limit)


def _build(document_id: str, texts: list[str]) -> Path:
    embedder = default_embedder()
    return shards.build(document_id, _points(document_id, texts), embed_model=embedder.name, dim=embedder.dim)


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_documents_shards_rank_as_one_collection_of_the_same_documents(shards_dir: Path, question: str) -> None:
    """BM25's IDF summed over the searched shards is the collection's own: the same fused list, the same scores."""
    ids = [str(uuid.uuid4()) for _ in TEXTS]
    client, name = index.get_client(), f"docs_parity_{uuid.uuid4().hex[:6]}"
    docs_index.ensure_collection(client, name, default_embedder().dim, payload_indexes=False)
    try:
        for document_id, texts in zip(ids, TEXTS, strict=True):
            _build(document_id, texts)
            docs_index.upsert(client, name, _points(document_id, texts))
        embedder = default_embedder()
        want = docs_index.search(client, name, org_id=1, user_ref="u1",
                                 dense=embedder.embed_query([question])[0].tolist(), sparse=query_vector(question),
                                 limit=5)
    finally:
        client.delete_collection(name)

    got = _search(ids, question)

    assert [p["text"] for p, _ in got] == [p["text"] for p, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)


def test_a_shard_is_built_once_and_a_second_build_leaves_it(shards_dir: Path) -> None:
    document_id = str(uuid.uuid4())
    path = _build(document_id, TEXTS[0])

    again = _build(document_id, TEXTS[1])  # a redelivered task; never a different document in practice

    assert again == path and shards.point_count(document_id) == 3
    assert [p.name for p in shards_dir.iterdir()] == [document_id]  # no temporary directory left behind
    assert "штраф" in _search([document_id], "штраф")[0][0]["text"]


def test_another_process_searches_a_shard_this_one_has_open(shards_dir: Path) -> None:
    document_id = str(uuid.uuid4())
    _build(document_id, TEXTS[0])
    mine = _search([document_id], QUESTIONS[0])  # open here, and kept open while the other process reads

    script = f"""
import django, json
django.setup()
from documents import shards
from knowledge.embeddings import default_embedder
from knowledge.lexical import query_vector
e = default_embedder()
q = {QUESTIONS[0]!r}
found = shards.search([{document_id!r}], dense=e.embed_query([q])[0].tolist(), sparse=query_vector(q),
                      embed_model=e.name, limit=5)
print(json.dumps([[p["text"], s] for p, s in found]))
"""
    env = {"DJANGO_SETTINGS_MODULE": "lexery.settings", "DOCS_SHARDS_DIR": str(shards_dir),
           "LEXERY_VAR_DIR": str(settings.VAR_DIR), "LOG_LEVEL": "ERROR", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120, check=True)

    assert json.loads(out.stdout.strip().splitlines()[-1]) == [[p["text"], s] for p, s in mine]


def test_a_removed_shard_is_no_longer_searched_and_another_model_is_skipped(shards_dir: Path) -> None:
    kept, gone = str(uuid.uuid4()), str(uuid.uuid4())
    _build(kept, TEXTS[0])
    _build(gone, TEXTS[2])
    assert {p["document_id"] for p, _ in _search([kept, gone], "прострочення")} == {kept, gone}

    shards.remove(gone)

    assert {p["document_id"] for p, _ in _search([kept, gone], "прострочення")} == {kept}
    assert shards.point_count(gone) == 0 and not shards.exists(gone)
    embedder = default_embedder()
    other_model = shards.search([kept], dense=embedder.embed_query(["штраф"])[0].tolist(),
                                sparse=query_vector("штраф"), embed_model="another-model", limit=5)
    assert other_model == []
    assert not shards.is_current(kept, embed_model="another-model") and shards.is_current(kept,
                                                                                          embed_model=embedder.name)


class _DeletedMidway:
    """The real embedder, with the document's row deleted while its chunks are embedded (a user's DELETE landing
    on the web process meanwhile): the delete task may run before the shard exists."""

    def __init__(self, document_id: str) -> None:
        self.document_id, self.real = document_id, default_embedder()
        self.name, self.dim = self.real.name, self.real.dim

    def embed(self, texts: list[str]) -> Any:
        from documents.models import UserDocument

        UserDocument.objects.filter(pk=self.document_id).delete()
        return self.real.embed(texts)

    def embed_query(self, texts: list[str]) -> Any:
        return self.real.embed_query(texts)


@pytest.mark.django_db
def test_a_document_deleted_while_it_is_embedded_leaves_no_shard(shards_dir: Path, specialist: Any) -> None:
    from documents.processing import document_extract, document_index
    from documents.services import document_create

    # on-commit work never runs in this test's transaction: extraction and indexing are called here, in order
    document = document_create(org=specialist.org, user_ref="u1", filename="договір.txt", content_type="text/plain",
                               data="\n".join(TEXTS[0]).encode())
    document_extract(document_id=str(document.pk), on_indexing=lambda _: None)

    result = document_index(document_id=str(document.pk), embedder=_DeletedMidway(str(document.pk)))

    assert result is None and not shards.exists(str(document.pk))
    assert list(shards_dir.iterdir()) == []  # nor a temporary or removed directory left behind
