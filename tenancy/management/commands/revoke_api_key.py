from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from tenancy.auth import api_key_revoke
from tenancy.models import ApiKey


class Command(BaseCommand):
    help = "Revoke API keys at once: one by its prefix (its first 10 characters, as admin lists them) or all of an org."

    def add_arguments(self, parser: CommandParser) -> None:
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--prefix", help="the key's prefix, e.g. lx_AbCdEfG")
        target.add_argument("--org", help="revoke every live key of this org (slug)")
        parser.add_argument("--reason", default="", help="kept in the key audit")

    def handle(self, *args: Any, **opts: Any) -> None:
        keys = ApiKey.objects.select_related("org").filter(revoked_at__isnull=True)
        keys = keys.filter(prefix=opts["prefix"]) if opts["prefix"] else keys.filter(org__slug=opts["org"])
        found = list(keys)
        if not found:
            raise CommandError("no live API key matches")
        revoked = [k for k in found if api_key_revoke(api_key=k, actor="manage.py revoke_api_key",
                                                      reason=opts["reason"])]
        for k in revoked:
            self.stdout.write(f"revoked {k.org.slug}:{k.prefix}…")
