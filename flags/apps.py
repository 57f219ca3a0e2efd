from django.apps import AppConfig


class FlagsConfig(AppConfig):
    name = "flags"
