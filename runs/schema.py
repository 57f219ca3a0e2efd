"""The OpenAPI schema's own rules: components named after the operation they belong to, and the API-key scheme.

Every view nests an ``InputSerializer`` / ``OutputSerializer`` (HackSoft style); drf-spectacular names a component
after the class alone, so they all became ``Input`` / ``Output`` and ``POST /api/v1/runs`` was documented with
DocList's ``{query}`` body (issue 12). A nested serializer is named by its path instead: ``RunCreateInput``,
``CostReportOutputTotals``."""

from __future__ import annotations

from typing import Any, Literal

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema


def component_name(qualname: str) -> str:
    parts = [p.removesuffix("Serializer").removesuffix("Api") for p in qualname.split(".")]
    return "".join(parts)


class LexeryAutoSchema(AutoSchema):
    def get_serializer_name(self, serializer: Any, direction: Literal["request", "response"]) -> str:
        name = super().get_serializer_name(serializer, direction)
        cls = type(serializer)
        ref_name = getattr(getattr(cls, "Meta", None), "ref_name", None)
        if ref_name is None and "." in cls.__qualname__ and "<locals>" not in cls.__qualname__:
            return component_name(cls.__qualname__)
        return name


class ApiKeyScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    """``Authorization: Bearer <api key>``: an org's key from ``create_api_key`` (stored hashed)."""

    target_class = "runs.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {"type": "http", "scheme": "bearer", "bearerFormat": "lx_…",
                "description": "An org's API key: `Authorization: Bearer <key>`."}
