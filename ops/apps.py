from django.apps import AppConfig


class OpsConfig(AppConfig):
    """The process's operational faces: /healthz, /readyz, /metrics and request ids on every log line."""

    name = "ops"
    default_auto_field = "django.db.models.BigAutoField"
