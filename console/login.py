"""The console's login, throttled: after ``ADMIN_LOGIN_MAX_FAILURES`` failed logins for one username from one
address within ``ADMIN_LOGIN_WINDOW_S``, further attempts get a 429 until the window passes. Counted on the shared
throttle cache, so every web process sees the same count."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.core.cache import caches
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse


def _key(request: HttpRequest, username: str) -> str:
    address = request.META.get("REMOTE_ADDR", "")
    return f"admin-login:{address}:{username.strip().lower()[:150]}"


@receiver(user_login_failed)
def count_failure(sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any) -> None:
    if request is None:
        return
    cache, key = caches["throttle"], _key(request, str(credentials.get("username", "")))
    cache.add(key, 0, timeout=settings.ADMIN_LOGIN_WINDOW_S)
    try:
        cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=settings.ADMIN_LOGIN_WINDOW_S)


def throttled(login: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    def view(request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        if request.method == "POST":
            failures = caches["throttle"].get(_key(request, request.POST.get("username", ""))) or 0
            if failures >= settings.ADMIN_LOGIN_MAX_FAILURES:
                return HttpResponse("Too many failed logins for this user; try again later.", status=429,
                                    content_type="text/plain",
                                    headers={"Retry-After": str(settings.ADMIN_LOGIN_WINDOW_S)})
        return login(request, extra_context)

    return view
