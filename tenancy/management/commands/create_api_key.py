from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

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
        ttl = opts["ttl_days"]
        if ttl is not None and ttl < 0:
            raise CommandError("--ttl-days must be 0 (never) or more")
        _, raw = api_key_issue(org=org, name=opts["name"], ttl_days=ttl, actor="manage.py create_api_key")
        self.stdout.write(raw)
