from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from flags.models import FeatureFlag
from flags.registry import KNOWN_FLAGS
from tenancy.auth import api_key_create
from tenancy.models import Org, Specialist

DEMO_SOUL = "Ти — Lexery, уважний юридичний помічник з українського права. Пояснюєш просто і точно."


class Command(BaseCommand):
    help = "Create the demo org and specialist 'demo' (idempotent) and print a new API key for the org."

    def handle(self, *args: Any, **opts: Any) -> None:
        org, _ = Org.objects.get_or_create(slug="demo", defaults={"name": "Demo org"})
        Specialist.objects.get_or_create(
            org=org, slug="demo",
            defaults={"name": "Юрист-консультант", "soul": DEMO_SOUL,
                      "role_skeleton": "Ти консультуєш з трудового та конституційного права України.",
                      "directives": ["Посилайся на конкретні статті.", "Не вигадуй норм."],
                      "red_lines": "Не давай порад щодо ухилення від закону.",
                      "response_contract": "Коротка відповідь, далі деталі, далі підстави."})
        for key, (default, description) in KNOWN_FLAGS.items():
            FeatureFlag.objects.get_or_create(key=key, defaults={"default_enabled": default,
                                                                 "description": description})
        self.stdout.write(api_key_create(org=org, name="seed_demo"))
