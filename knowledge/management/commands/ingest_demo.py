from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from knowledge.index import close_client
from knowledge.ingest.catalog import catalog_load
from knowledge.ingest.jsonl import IngestError
from knowledge.ingest.laws import laws_ingest

DEMO = Path(__file__).resolve().parents[2] / "demo_corpus"


class Command(BaseCommand):
    help = "Load the demo catalog and index the demo corpus shipped in the repo (see knowledge/demo_corpus)."

    def handle(self, *args: Any, **opts: Any) -> None:
        n = catalog_load(acts_path=DEMO / "catalog_acts.jsonl", aliases_path=DEMO / "act_aliases.jsonl")
        self.stdout.write(f"catalog: {n} records")
        try:
            report = laws_ingest(path=DEMO / "demo_articles.jsonl")
        except IngestError as exc:  # a bad LAY_QUESTIONS_FILE, say: a sentence, not a traceback
            raise CommandError(str(exc)) from exc
        finally:
            close_client()
        self.stdout.write(f"demo corpus: {report.articles} articles, {report.chunks} chunks "
                          f"({report.upserted} new) in {report.seconds:.1f}s")
