from django.apps import AppConfig


class KnowledgeConfig(AppConfig):
    name = "knowledge"
