from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.index import close_client
from knowledge.ingest.jsonl import IngestError
from knowledge.ingest.laws import laws_ingest


class Command(BaseCommand):
    help = "Chunk, embed and index law articles from a corpus JSONL (.jsonl or .jsonl.gz). Safe to re-run."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--acts", default="", help="Comma-separated act nregs to keep, e.g. 322-08,435-15")
        parser.add_argument("--limit", type=int, default=None, help="Stop after this many articles")
        parser.add_argument("--batch-size", type=int, default=None,
                            help="chunks per embedding/upsert batch (whole articles; default EMBED_BATCH_SIZE)")
        parser.add_argument("--max-batches", type=int, default=None,
                            help="stop after writing this many batches (a re-run continues from there)")

    def handle(self, *args: Any, **opts: Any) -> None:
        acts = {a.strip() for a in opts["acts"].split(",") if a.strip()} or None
        for name in ("limit", "batch_size", "max_batches"):
            if opts[name] is not None and opts[name] <= 0:
                raise CommandError(f"--{name.replace('_', '-')} must be a positive number")
        try:
            report = laws_ingest(path=opts["path"], acts=acts, limit=opts["limit"], batch_size=opts["batch_size"],
                                 max_batches=opts["max_batches"])
        except IngestError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            close_client()
        self.stdout.write(f"ingested {report.articles} articles as {report.chunks} chunks "
                          f"({report.upserted} new, {report.skipped_existing} already indexed; "
                          f"{report.vectors_cached} dense vectors from the embedding cache) "
                          f"from {len(report.acts)} acts in {report.seconds:.1f}s"
                          + (" — stopped by --max-batches; run again to continue" if report.stopped_early else ""))
