from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from runs.lifecycle import runs_purge


class Command(BaseCommand):
    help = ("Purge finished runs older than DAYS: their contexts, stage events, history copies and personal fields "
            "go; the run rows and their cost ledger stay.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--older-than", type=int, required=True, metavar="DAYS")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["older_than"] < 1:
            raise CommandError("--older-than must be at least 1 day")
        self.stdout.write(f"purged {runs_purge(older_than_days=opts['older_than'])} run(s)")
