"""The knowledge a fresh clone ships (knowledge/corpus): the files are there, well under GitHub's limits, parse, and
load through the very code `make knowledge` runs (`manage.py ingest_knowledge`), on a slice of the corpus."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from knowledge import index
from knowledge.embed_cache import SENTENCES, VectorCache
from knowledge.ingest.catalog import catalog_load
from knowledge.ingest.corpus import article_sentences, dense_text, read_articles
from knowledge.ingest.jsonl import IngestError, json_lines
from knowledge.ingest.shipped import CATALOG_FILES, CORE_ARTICLES, CORPUS_DIR, writer_forms
from knowledge.models import Act
from knowledge.selectors import act_corpus_ids, act_names
from legaltext.chunking import FINAL_PROVISIONS

COLLECTION = "lldbi_shipped_test"


@pytest.fixture
def own_collection(settings: Any, db: Any) -> Any:
    settings.LLDBI_COLLECTION, settings.LLDBI_TERMS_COLLECTION = COLLECTION, f"{COLLECTION}_terms"
    yield
    for name in (COLLECTION, f"{COLLECTION}_terms"):  # the command closed the client it used: open a fresh one
        if index.get_client().collection_exists(name):
            index.get_client().delete_collection(name)


def test_the_shipped_files_exist_parse_and_stay_small() -> None:
    for name in [*CATALOG_FILES.values(), CORE_ARTICLES]:
        path = CORPUS_DIR / f"{name}.gz"
        assert path.stat().st_size < 10 * 2**20, path  # GitHub warns at 50 MB: keep far below
        assert sum(1 for _ in json_lines(path)) > 90
    acts = json.loads((CORPUS_DIR / "core_articles_acts.json").read_text(encoding="utf-8"))["acts"]
    nregs = {rec["act_nreg"] for _, rec in json_lines(CORPUS_DIR / f"{CORE_ARTICLES}.gz")}
    assert nregs == {a["nreg"] for a in acts} and len(nregs) == 45
    for licence in ("Ansvar-Ukrainian-law-mcp.LICENSE", "SecondLayer.LICENSE", "README.md"):
        assert (CORPUS_DIR / licence).stat().st_size > 500


def test_the_corpus_folder_is_a_default_embedding_cache_dir() -> None:
    assert CORPUS_DIR in settings.EMBEDDING_CACHE_DIRS


def test_make_knowledge_loads_the_catalog_then_a_slice_of_the_corpus_and_resumes(own_collection: None) -> None:
    out = io.StringIO()
    call_command("ingest_knowledge", "--limit", "50", stdout=out, stderr=io.StringIO())
    assert Act.objects.count() > 8000  # the whole catalog, not the demo's 45
    assert "catalog:" in out.getvalue() and "50 articles" in out.getvalue() and "knowledge loaded in" in out.getvalue()
    constitution = Act.objects.get(nreg="254к/96-ВР")
    assert constitution.indexed and Act.objects.get(nreg="2755-17").indexed is False  # ПКУ: catalog only
    assert index.count(index.get_client(), COLLECTION) >= 50
    catalog_only = Act.objects.filter(indexed=False).order_by("-updated_at")  # the ingest re-marks the indexed
    stamp = catalog_only.values_list("updated_at", flat=True)[0]
    # a second run over the same slice writes nothing new: neither points nor catalog rows
    again = io.StringIO()
    call_command("ingest_knowledge", "--limit", "50", stdout=again, stderr=io.StringIO())
    assert "(0 new," in again.getvalue()
    assert catalog_only.values_list("updated_at", flat=True)[0] == stamp
    _the_shipped_vectors_match_the_shipped_corpus()


def _the_shipped_vectors_match_the_shipped_corpus() -> None:
    """Every dense text and every sentence ingest builds (with the catalog loaded) is in the shipped caches, so
    `make knowledge` embeds nothing: a change to the dense text, the sentences or the catalog's titles without a
    regenerated cache fails here, not as a 20-minute embedding on a user's machine."""
    cache = VectorCache(settings.EMBEDDING_MODEL, [CORPUS_DIR])
    articles = list(read_articles(CORPUS_DIR / f"{CORE_ARTICLES}.gz", canonical=act_corpus_ids(), names=act_names()))
    # the file's 8,101 records: 8,092 articles (8 were КУпАП's and ЦК's articles quoted after final provisions, one
    # the Constitution's «Розділ XV» numbered as an article) and 33 acts' final provisions, 32 cut from a last article
    assert len(cache) == len(articles) == 8125
    assert sum(a.article == FINAL_PROVISIONS for a in articles) == 33
    missing = [f"{a.act_nreg} {a.article}" for a in articles
               if cache.get(dense_text(a, settings.DENSE_HEAD_CHARS)) is None]
    assert not missing, missing
    assert any(a.act_title == "Про організацію трудових відносин в умовах воєнного стану" for a in articles)
    sentences = VectorCache(settings.EMBEDDING_MODEL, [CORPUS_DIR], SENTENCES)
    said = [(a, s) for a in articles for s in article_sentences(
        a, max_sentences=settings.MEANING_SENTENCES, max_chars=settings.MEANING_SENTENCE_CHARS)]
    assert len(said) > 40_000
    missing = [f"{a.act_nreg} {a.article}: {s[:40]}" for a, s in said if sentences.get(s) is None]
    assert not missing, missing[:5]
    # the same sentences as the writer sees them in the evidence (a chunk's normalised text, the heading over it):
    # looked up, not embedded again in every answer
    weighed = [(a, s) for a in articles for s in writer_forms(a)]
    assert len(weighed) > 50_000
    missing = [f"{a.act_nreg} {a.article}: {s[:40]}" for a, s in weighed if sentences.get(s) is None]
    assert not missing, missing[:5]


def test_a_folder_missing_a_catalog_file_is_refused_before_anything_is_written(db: Any, tmp_path: Path) -> None:
    (tmp_path / "acts_catalog.jsonl").write_text('{"nreg": "1-01"}\n', encoding="utf-8")
    with pytest.raises(CommandError, match=r"missing act_aliases\.jsonl"):
        call_command("ingest_knowledge", "--dir", str(tmp_path), stdout=io.StringIO())
    assert not Act.objects.exists()
    with pytest.raises(CommandError, match="not a folder"):
        call_command("ingest_knowledge", "--dir", str(tmp_path / "nope"))


def test_the_catalog_command_reads_gzipped_files_from_a_folder(db: Any, tmp_path: Path) -> None:
    with gzip.open(tmp_path / "acts_catalog.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write(json.dumps({"nreg": "435-15", "title": "Цивільний кодекс України", "abbreviations": ["ЦК"]},
                            ensure_ascii=False) + "\n")
    call_command("ingest_catalog", "--dir", str(tmp_path), stdout=io.StringIO())
    assert Act.objects.get(nreg="435-15").abbreviations == ["ЦК"]


def test_a_cut_gzip_file_gets_a_sentence_not_a_traceback(db: Any, tmp_path: Path) -> None:
    whole = gzip.compress(b'{"nreg": "435-15"}\n' * 2000)
    cut = tmp_path / "acts_catalog.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(IngestError, match="not a complete gzip file"):
        catalog_load(acts_path=cut, aliases_path=None)
    not_gzip = tmp_path / "plain.jsonl.gz"
    not_gzip.write_text('{"nreg": "435-15"}\n', encoding="utf-8")
    with pytest.raises(IngestError, match="not a complete gzip file"):
        catalog_load(acts_path=not_gzip, aliases_path=None)
