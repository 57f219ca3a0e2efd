from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from runs.auth import api_key_create
from runs.models import Org


class Command(BaseCommand):
    help = "Create an API key for an org and print it (alone) on stdout. Only its digest is stored."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", required=True, help="org slug")
        parser.add_argument("--name", default="")

    def handle(self, *args: Any, **opts: Any) -> None:
        org = Org.objects.filter(slug=opts["org"]).first()
        if org is None:
            raise CommandError(f"no org with slug {opts['org']!r}")
        self.stdout.write(api_key_create(org=org, name=opts["name"]))
