"""Per-org API keys: ``Authorization: Bearer <key>``. Only a SHA-256 digest is stored; a key is shown once, expires
after ``API_KEY_TTL_DAYS`` (keys made before expiry existed never do), records when it was last used, and every
creation and revocation leaves an ``ApiKeyAudit`` row."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from lexery.errors import InputError
from tenancy.models import ApiKey, ApiKeyAudit, Org

KEY_PREFIX = "lx_"
# A hundred years: longer is "never" (0). A day count past the calendar's end overflowed while the expiry was
# computed, a traceback of create_api_key (fuzzing, issue 12).
MAX_TTL_DAYS = 36_500


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _audit(key: ApiKey, action: str, actor: str, reason: str = "") -> None:
    ApiKeyAudit.objects.create(api_key=key, key_prefix=key.prefix, org_slug=key.org.slug, action=action,
                               actor=actor[:150], reason=reason[:300])


def api_key_issue(*, org: Org, name: str = "", expires_at: datetime | None = None, ttl_days: int | None = None,
                  actor: str = "system") -> tuple[ApiKey, str]:
    """A new key: the row (digest only) and the key itself, which nobody can see again. It expires at
    ``expires_at``, else after ``ttl_days`` (None: ``API_KEY_TTL_DAYS``; 0: never)."""
    days = settings.API_KEY_TTL_DAYS if ttl_days is None else ttl_days
    if not 0 <= days <= MAX_TTL_DAYS:
        raise InputError(f"a key's lifetime is {days} days; it must be 0 (never expires) to {MAX_TTL_DAYS}")
    name_limit = ApiKey._meta.get_field("name").max_length or 0
    if len(name) > name_limit:  # PostgreSQL refuses the row; a sentence now, not a DataError
        raise InputError(f"a key's name is {len(name)} characters long; the limit is {name_limit}")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    if expires_at is None and days:
        expires_at = timezone.now() + timedelta(days=days)
    with transaction.atomic():
        row = ApiKey.objects.create(org=org, prefix=key[:10], digest=digest(key), name=name, expires_at=expires_at)
        _audit(row, ApiKeyAudit.Action.CREATED, actor)
    return row, key


def api_key_create(*, org: Org, name: str = "", expires_at: datetime | None = None, actor: str = "system") -> str:
    return api_key_issue(org=org, name=name, expires_at=expires_at, actor=actor)[1]


def api_key_revoke(*, api_key: ApiKey, actor: str, reason: str = "") -> bool:
    """Revoke a key (at once: the next request with it is a 401). False if it was revoked already."""
    with transaction.atomic():
        updated = ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
        if updated:
            api_key.refresh_from_db()
            _audit(api_key, ApiKeyAudit.Action.REVOKED, actor, reason)
    return bool(updated)


def _touch(api_key: ApiKey) -> None:
    """last_used_at, written at most once per API_KEY_LAST_USED_RESOLUTION_S: not a write on every request."""
    now = timezone.now()
    resolution = timedelta(seconds=settings.API_KEY_LAST_USED_RESOLUTION_S)
    if api_key.last_used_at is None or now - api_key.last_used_at >= resolution:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now


class OrgPrincipal:
    """The authenticated caller: an org, not a Django user."""

    is_authenticated = True

    def __init__(self, org: Org) -> None:
        self.org = org


def request_org(request: Request) -> Org:
    """The org an API request acts for: every API view reaches its data through this one org.

    ``IsAuthenticated`` runs before a view, so an API view always finds an ``OrgPrincipal`` here; anything else
    (a view that forgot its permission class, a Django user from a session) is refused, never served as no org."""
    principal = request.user
    if not isinstance(principal, OrgPrincipal):
        raise exceptions.NotAuthenticated("an API key is required")
    return principal.org


class ApiKeyAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[OrgPrincipal, ApiKey] | None:
        header = request.headers.get("Authorization", "")
        if not header:
            return None
        scheme, _, key = header.partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise exceptions.AuthenticationFailed("use 'Authorization: Bearer <api key>'")
        api_key = (ApiKey.objects.select_related("org")
                   .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()),
                           digest=digest(key.strip()), revoked_at__isnull=True).first())
        if api_key is None:
            raise exceptions.AuthenticationFailed("unknown, expired or revoked API key")
        _touch(api_key)
        return OrgPrincipal(api_key.org), api_key

    def authenticate_header(self, request: Request) -> str:
        return "Bearer"
