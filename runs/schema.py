"""The OpenAPI schema's own rules: components named after the operation they belong to (the API-key scheme is
``tenancy/schema.py``, beside the authentication it describes).

Every view nests an ``InputSerializer`` / ``OutputSerializer`` (HackSoft style); drf-spectacular names a component
after the class alone, so they all became ``Input`` / ``Output`` and ``POST /api/v1/runs`` was documented with
DocList's ``{query}`` body (issue 12). A nested serializer is named by its path instead: ``RunCreateInput``,
``CostReportOutputTotals``."""

from __future__ import annotations

from typing import Any, Literal

from drf_spectacular.openapi import AutoSchema

# Registers the API-key scheme with drf-spectacular: imported here, where the schema is built, not at start-up.
import tenancy.schema  # noqa: F401


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
