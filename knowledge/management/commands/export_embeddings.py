from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.embed_cache import ARTICLES, SENTENCES, VectorCache, cache_file, embed_with_cache, write_cache
from knowledge.embeddings import default_embedder
from knowledge.ingest.corpus import article_sentences, dense_text, read_articles
from knowledge.ingest.jsonl import IngestError
from knowledge.ingest.lay_questions import questions_for, stored_lay_questions
from knowledge.ingest.shipped import writer_forms
from knowledge.progress import Progress
from knowledge.selectors import act_corpus_ids, act_names
from legaltext.chunking import Article


class Command(BaseCommand):
    help = ("Embed a corpus's dense texts and first sentences (and its articles' lay questions) with EMBEDDING_MODEL "
            "and write them as embedding "
            "caches (DIR/embeddings.<model>.npz, DIR/sentences.<model>.npz) that ingest_laws looks vectors up in "
            "(EMBEDDING_CACHE_DIRS). Texts a cache of EMBEDDING_CACHE_DIRS already holds are taken from it (a vector "
            "is a pure function of model and text), so a re-export after a few titles changed embeds those articles "
            "only; --no-cache embeds all.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="corpus JSONL (core format), e.g. the demo corpus")
        parser.add_argument("--out", type=Path, required=True, help="directory of the cache file")
        parser.add_argument("--batch-size", type=int, default=32)
        parser.add_argument("--no-cache", action="store_true", help="embed every text, reuse no cached vector")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["batch_size"] <= 0:
            raise CommandError("--batch-size must be a positive number of articles")
        if opts["out"].exists() and not opts["out"].is_dir():
            raise CommandError(f"--out {opts['out']} is a file; give the directory of the cache file")
        articles = self._articles(opts["path"])  # a bad file is refused before the model loads
        try:  # and a bad lay-questions file before either cache is written
            asked = stored_lay_questions()
        except IngestError as exc:
            raise CommandError(str(exc)) from exc
        self._export(ARTICLES, [dense_text(a, settings.DENSE_HEAD_CHARS) for a in articles], opts)
        sentences = [s for a in articles for s in article_sentences(
            a, max_sentences=settings.MEANING_SENTENCES, max_chars=settings.MEANING_SENTENCE_CHARS,
            asked=questions_for(asked, a))]
        if sentences:  # beside ingest's, the writer's forms of the same sentences (as the evidence shows them)
            sentences += [s for a in articles for s in writer_forms(a)]
            self._export(SENTENCES, list(dict.fromkeys(sentences)), opts)

    def _export(self, kind: str, texts: list[str], opts: dict[str, Any]) -> None:
        embedder = default_embedder()
        # read before the target is rewritten: --out is usually one of the cache dirs itself
        cache = None if opts["no_cache"] else VectorCache(embedder.name, settings.EMBEDDING_CACHE_DIRS, kind)
        progress = Progress(f"export_embeddings {kind}", total=len(texts), stream=sys.stderr)
        vectors, reused = [], 0
        for i in range(0, len(texts), opts["batch_size"]):
            batch = texts[i:i + opts["batch_size"]]
            got, hits = embed_with_cache(embedder, batch, cache)
            vectors.append(got)
            reused += hits
            progress.advance(len(batch))
        progress.finish()
        target = cache_file(opts["out"], embedder.name, kind)
        try:
            write_cache(target, embedder.name, texts, np.concatenate(vectors), quantized=kind == SENTENCES)
        except OSError as exc:
            raise CommandError(f"cannot write {target}: {exc.strerror or exc}") from exc
        self.stdout.write(f"wrote {len(texts)} {kind} vectors of {embedder.name} to {target} "
                          f"({reused} from a cache, {len(texts) - reused} embedded)")

    @staticmethod
    def _articles(path: Path) -> list[Article]:
        """The articles ingest_laws will embed, with the catalog's titles (load it first, as for ingest). A file
        that cannot be read, or holds no article, is the operator's sentence (it was a traceback, or an empty cache)."""
        try:
            articles = list(read_articles(path, canonical=act_corpus_ids(), names=act_names()))
        except IngestError as exc:
            raise CommandError(str(exc)) from exc
        if not articles:
            raise CommandError(f"no articles read from {path}")
        return articles
