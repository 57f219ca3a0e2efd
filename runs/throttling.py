"""Requests per API key, counted on a cache every web process shares (``THROTTLE_CACHE_URL``: Redis in production)
so the limit holds across processes. Past it: 429 with ``Retry-After`` (DRF sets the header from ``wait``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.cache import caches
from rest_framework.throttling import SimpleRateThrottle

if TYPE_CHECKING:  # rest_framework.views imports this module through its settings: no import cycle at run time
    from rest_framework.request import Request
    from rest_framework.views import APIView


class ApiKeyRateThrottle(SimpleRateThrottle):
    scope = "api_key"

    def __init__(self) -> None:
        self.cache = caches["throttle"]  # looked up per request: tests and settings may swap the cache
        super().__init__()

    def get_rate(self) -> str | None:
        return str(settings.API_THROTTLE_RATE or "") or None

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        key: Any = request.auth  # the ApiKey row: counted by its digest (unique, unlike a pk a rollback reuses)
        ident = f"key:{key.digest[:32]}" if getattr(key, "digest", None) else f"ip:{self.get_ident(request)}"
        return f"throttle:{self.scope}:{ident}"
