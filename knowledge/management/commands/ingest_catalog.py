from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge.ingest.catalog import catalog_load
from knowledge.ingest.jsonl import IngestError, find_jsonl
from knowledge.ingest.shipped import CATALOG_FILES, NAMES_FILE, TITLES_FILE


class Command(BaseCommand):
    help = ("Load the DocList act catalog into the Act table: acts, aliases and the usable name crossrefs "
            "(--dir takes acts_catalog.jsonl, act_aliases.jsonl and act_name_crossrefs.jsonl from one folder, "
            "each plain or .gz, and act_titles.jsonl and act_names.jsonl when they are there).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dir", type=Path, default=None, help="a folder with the three catalog files")
        parser.add_argument("--acts", type=Path, default=None, help="acts_catalog.jsonl")
        parser.add_argument("--aliases", type=Path, default=None, help="act_aliases.jsonl")
        parser.add_argument("--crossrefs", type=Path, default=None, help="act_name_crossrefs.jsonl")
        parser.add_argument("--titles", type=Path, default=None,
                            help="act_titles.jsonl: official titles for acts the catalog has none for")
        parser.add_argument("--names", type=Path, default=None,
                            help="act_names.jsonl: the names people call acts by, as aliases")

    def handle(self, *args: Any, **opts: Any) -> None:
        paths = {k: opts[k] for k in ("acts", "aliases", "crossrefs", "titles", "names")}
        if opts["dir"] is not None:
            folder = opts["dir"]
            if not folder.is_dir():
                raise CommandError(f"not a folder: {folder}")
            for key, name in {**CATALOG_FILES, "titles": TITLES_FILE, "names": NAMES_FILE}.items():
                if paths[key] is None:
                    paths[key] = find_jsonl(folder, name)
        if not any(paths.values()):
            raise CommandError("give --dir, or --acts / --aliases / --crossrefs")
        try:
            n = catalog_load(acts_path=paths["acts"], aliases_path=paths["aliases"],
                             crossrefs_path=paths["crossrefs"], titles_path=paths["titles"],
                             names_path=paths["names"])
        except IngestError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"catalog: {n} records loaded")
