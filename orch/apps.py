from django.apps import AppConfig


class OrchConfig(AppConfig):
    name = "orch"
