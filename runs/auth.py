"""Per-org API keys: ``Authorization: Bearer <key>``. Only a SHA-256 digest is stored."""

from __future__ import annotations

import hashlib
import secrets

from rest_framework import authentication, exceptions
from rest_framework.request import Request

from runs.models import ApiKey, Org

KEY_PREFIX = "lx_"


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def api_key_create(*, org: Org, name: str = "") -> str:
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    ApiKey.objects.create(org=org, prefix=key[:10], digest=digest(key), name=name)
    return key


class OrgPrincipal:
    """The authenticated caller: an org, not a Django user."""

    is_authenticated = True

    def __init__(self, org: Org) -> None:
        self.org = org


class ApiKeyAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[OrgPrincipal, ApiKey] | None:
        header = request.headers.get("Authorization", "")
        if not header:
            return None
        scheme, _, key = header.partition(" ")
        if scheme.lower() != "bearer" or not key.strip():
            raise exceptions.AuthenticationFailed("use 'Authorization: Bearer <api key>'")
        api_key = (ApiKey.objects.select_related("org")
                   .filter(digest=digest(key.strip()), revoked_at__isnull=True).first())
        if api_key is None:
            raise exceptions.AuthenticationFailed("unknown or revoked API key")
        return OrgPrincipal(api_key.org), api_key

    def authenticate_header(self, request: Request) -> str:
        return "Bearer"
