"""Requests per API key, counted on a cache every web process shares (``THROTTLE_CACHE_URL``: Redis in production)
so the limit holds across processes. Past it: 429 with ``Retry-After`` (DRF sets the header from ``wait``)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.cache import caches
from redis.exceptions import RedisError
from rest_framework.throttling import SimpleRateThrottle

logger = logging.getLogger(__name__)

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

    def allow_request(self, request: Request, view: APIView) -> bool:
        """The count lives in Redis; with Redis down every API request was a 500 (fault injection, issue 12). The
        limit protects the service, it is not what a request is for: the request passes, the operators are told."""
        try:
            return bool(super().allow_request(request, view))
        except RedisError as exc:
            logger.warning("rate limit not checked: its cache is unavailable",
                           extra={"error": f"{type(exc).__name__}: {exc}"[:200]})
            return True

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        key: Any = request.auth  # the ApiKey row: counted by its digest (unique, unlike a pk a rollback reuses)
        ident = f"key:{key.digest[:32]}" if getattr(key, "digest", None) else f"ip:{self.get_ident(request)}"
        return f"throttle:{self.scope}:{ident}"
