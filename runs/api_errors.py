"""Every API error is a JSON object with a sentence in ``detail`` (and field errors where there are some)."""

from __future__ import annotations

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_handler


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = drf_handler(exc, context)
    if response is None:
        return None
    data = response.data
    if isinstance(data, dict) and "detail" not in data:
        first = next(iter(data.items()), None)
        message = "invalid input"
        if first is not None:
            field, errors = first
            text = errors[0] if isinstance(errors, list) and errors else errors
            message = f"{field}: {text}"
        response.data = {"detail": message, "errors": data}
    elif isinstance(data, list):
        response.data = {"detail": "; ".join(str(x) for x in data)}
    return response
