from django.apps import AppConfig


class AssembleConfig(AppConfig):
    name = "assemble"
