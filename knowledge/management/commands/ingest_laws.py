from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.index import close_client
from knowledge.ingest.jsonl import IngestError
from knowledge.ingest.laws import laws_ingest
from knowledge.management.commands._ingest_options import add_slice_arguments, slice_acts


class Command(BaseCommand):
    help = "Chunk, embed and index law articles from a corpus JSONL (.jsonl or .jsonl.gz). Safe to re-run."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        add_slice_arguments(parser)

    def handle(self, *args: Any, **opts: Any) -> None:
        acts = slice_acts(opts)
        try:
            report = laws_ingest(path=opts["path"], acts=acts, limit=opts["limit"], batch_size=opts["batch_size"],
                                 max_batches=opts["max_batches"])
        except IngestError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            close_client()
        self.stdout.write(f"ingested {report.articles} articles as {report.chunks} chunks "
                          f"({report.upserted} new, {report.skipped_existing} already indexed; "
                          f"{report.vectors_cached} dense vectors and {report.sentences_cached} of "
                          f"{report.sentences} sentence vectors from the embedding cache) "
                          f"from {len(report.acts)} acts in {report.seconds:.1f}s"
                          + (" — stopped by --max-batches; run again to continue" if report.stopped_early else ""))
