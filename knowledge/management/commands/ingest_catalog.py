from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.services import IngestError, catalog_load


class Command(BaseCommand):
    help = "Load the DocList act catalog (acts and aliases JSONL) into the Act table."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--acts", type=Path, default=None, help="acts_catalog.jsonl")
        parser.add_argument("--aliases", type=Path, default=None, help="act_aliases.jsonl")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["acts"] is None and opts["aliases"] is None:
            raise CommandError("give --acts and/or --aliases")
        try:
            n = catalog_load(acts_path=opts["acts"], aliases_path=opts["aliases"])
        except IngestError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"catalog: {n} records loaded")
