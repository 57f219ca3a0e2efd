from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.embed_cache import cache_file, write_cache
from knowledge.embeddings import default_embedder
from knowledge.ingest.corpus import dense_text, read_articles
from knowledge.progress import Progress
from knowledge.selectors import act_corpus_ids, act_names


class Command(BaseCommand):
    help = ("Embed a corpus's dense texts with EMBEDDING_MODEL and write them as an embedding cache "
            "(DIR/embeddings.<model>.npz) that ingest_laws looks vectors up in (EMBEDDING_CACHE_DIRS).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="corpus JSONL (core format), e.g. the demo corpus")
        parser.add_argument("--out", type=Path, required=True, help="directory of the cache file")
        parser.add_argument("--batch-size", type=int, default=32)

    def handle(self, *args: Any, **opts: Any) -> None:
        if not opts["path"].exists():
            raise CommandError(f"file not found: {opts['path']}")
        if opts["batch_size"] <= 0:
            raise CommandError("--batch-size must be a positive number of articles")
        embedder = default_embedder()
        # the texts ingest_laws will embed: the same titles from the catalog (load it first, as for ingest)
        texts = [dense_text(a, settings.DENSE_HEAD_CHARS)
                 for a in read_articles(opts["path"], canonical=act_corpus_ids(), names=act_names())]
        progress = Progress("export_embeddings", total=len(texts), stream=sys.stderr)
        vectors = []
        for i in range(0, len(texts), opts["batch_size"]):
            batch = texts[i:i + opts["batch_size"]]
            vectors.append(embedder.embed(batch))
            progress.advance(len(batch))
        progress.finish()
        target = cache_file(opts["out"], embedder.name)
        write_cache(target, embedder.name, texts, np.concatenate(vectors) if vectors else np.zeros((0, embedder.dim)))
        self.stdout.write(f"wrote {len(texts)} vectors of {embedder.name} to {target}")
