"""The API-key scheme in the OpenAPI schema: drf-spectacular finds this extension by the authentication class's
dotted path once the module is imported — by ``runs/schema.py``, the schema class every API view generates with."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyScheme(OpenApiAuthenticationExtension):
    """``Authorization: Bearer <api key>``: an org's key from ``create_api_key`` (stored hashed)."""

    target_class = "tenancy.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {"type": "http", "scheme": "bearer", "bearerFormat": "lx_…",
                "description": "An org's API key: `Authorization: Bearer <key>`."}
