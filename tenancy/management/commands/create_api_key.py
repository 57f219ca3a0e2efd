from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lexery.errors import InputError
from tenancy.auth import api_key_issue
from tenancy.models import Org


class Command(BaseCommand):
    help = "Create an API key for an org and print it (alone) on stdout. Only its digest is stored."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--org", required=True, help="org slug")
        parser.add_argument("--name", default="")
        parser.add_argument("--ttl-days", type=int, default=None,
                            help="days until the key expires (default API_KEY_TTL_DAYS; 0: never)")

    def handle(self, *args: Any, **opts: Any) -> None:
        org = Org.objects.filter(slug=opts["org"]).first()
        if org is None:
            raise CommandError(f"no org with slug {opts['org']!r}")
        try:
            _, raw = api_key_issue(org=org, name=opts["name"], ttl_days=opts["ttl_days"],
                                   actor="manage.py create_api_key")
        except InputError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(raw)
