from django.apps import AppConfig


class RunsConfig(AppConfig):
    name = "runs"

    def ready(self) -> None:
        from runs import schema  # noqa: F401  (registers the API-key scheme with drf-spectacular)
