"""Optional error reporting (SENTRY_DSN): unhandled errors of the web process and the workers, and ERROR log
lines, go to a Sentry-compatible server. Configuration only: called from settings when a DSN is set."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured


def init_error_reporting(*, dsn: str, environment: str, traces_sample_rate: float) -> None:
    try:
        import sentry_sdk
        from sentry_sdk.integrations.celery import CeleryIntegration
        from sentry_sdk.integrations.django import DjangoIntegration
    except ImportError as exc:  # the base requirements do not carry it
        raise ImproperlyConfigured("SENTRY_DSN is set but sentry-sdk is not installed: "
                                   "pip install -r requirements/prod.txt") from exc
    sentry_sdk.init(
        dsn=dsn,
        environment=environment,
        traces_sample_rate=traces_sample_rate,
        # Questions, documents and API keys are people's data: no request bodies, cookies, users or local
        # variables leave the process, only the stack and the log message.
        send_default_pii=False,
        max_request_body_size="never",
        include_local_variables=False,
        integrations=[DjangoIntegration(), CeleryIntegration()],
    )
