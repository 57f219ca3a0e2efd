from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.index import close_client
from knowledge.ingest.jsonl import IngestError
from knowledge.ingest.shipped import CORPUS_DIR, knowledge_load
from knowledge.management.commands._ingest_options import add_slice_arguments, slice_acts


class Command(BaseCommand):
    help = ("Load the shipped knowledge (knowledge/corpus): the act catalog, then the 45 core acts, with progress. "
            "Resumable: a re-run continues an interrupted ingest and writes nothing over a complete index.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dir", type=Path, default=CORPUS_DIR,
                            help="a folder laid out as knowledge/corpus (catalog files and core_articles.jsonl[.gz])")
        add_slice_arguments(parser)

    def handle(self, *args: Any, **opts: Any) -> None:
        acts = slice_acts(opts)
        if not opts["dir"].is_dir():
            raise CommandError(f"not a folder: {opts['dir']}")
        try:
            result = knowledge_load(folder=opts["dir"], acts=acts, limit=opts["limit"],
                                    batch_size=opts["batch_size"], max_batches=opts["max_batches"],
                                    say=self.stdout.write)
        except IngestError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            close_client()
        laws = result.laws
        self.stdout.write(f"core corpus: {laws.articles} articles from {len(laws.acts)} acts as {laws.chunks} chunks "
                          f"({laws.upserted} new, {laws.skipped_existing} already indexed; "
                          f"{laws.vectors_cached} dense vectors and {laws.sentences_cached} of {laws.sentences} "
                          f"sentence vectors from the cache) in {laws.seconds:.1f}s")
        self.stdout.write(f"knowledge loaded in {result.seconds:.1f}s"
                          + (" — stopped by --max-batches; run again to continue" if laws.stopped_early else ""))
