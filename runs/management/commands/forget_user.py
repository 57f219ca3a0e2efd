from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lexery.errors import InputError
from runs.lifecycle import user_forget
from tenancy.models import Org


class Command(BaseCommand):
    help = ("Forget one end user of an org: their memory items, documents (files, chunks, vectors) and the "
            "questions, answers and history of their runs (the cost ledger stays).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", required=True, help="org slug")
        parser.add_argument("--user-ref", required=True)

    def handle(self, *args: Any, **opts: Any) -> None:
        org = Org.objects.filter(slug=opts["org"]).first()
        if org is None:
            raise CommandError(f"no org with slug {opts['org']!r}")
        try:
            done = user_forget(org=org, user_ref=opts["user_ref"])
        except InputError as exc:
            raise CommandError(f"--user-ref: {exc}") from exc
        self.stdout.write(f"forgot {done.memory_items} memory item(s), {done.documents} document(s), "
                          f"{done.runs} run(s)")
