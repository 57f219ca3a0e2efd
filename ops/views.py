"""/healthz, /readyz and /metrics: plain Django views, outside the API — no API key, no throttle, not in the
OpenAPI schema — and nothing in their bodies but states and sentences of ours."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from ops import readiness


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """The process is alive and answers HTTP; touches no dependency (a liveness probe must not restart a web
    process because the database is down)."""
    return JsonResponse({"status": "alive"})


@never_cache
@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    """Every dependency with its state; 503 when one is down (a readiness probe takes the process out of the
    load balancer until it answers again)."""
    checks = readiness.run_probes(readiness.probes())
    down = sorted(name for name, check in checks.items() if check.state == readiness.DOWN)
    body = {"status": "not_ready" if down else "ready", "down": down,
            "checks": {name: {"state": c.state, "reason": c.reason} for name, c in checks.items()}}
    return JsonResponse(body, status=503 if down else 200)


@never_cache
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    if not settings.METRICS_ENABLED:
        raise Http404
    token = settings.METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            response = HttpResponse("metrics need the bearer token\n", status=401, content_type="text/plain")
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return response
    from prometheus_client import CONTENT_TYPE_LATEST

    from ops.metrics import render

    return HttpResponse(render(), content_type=CONTENT_TYPE_LATEST)
