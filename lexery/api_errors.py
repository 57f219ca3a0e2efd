"""The one error-to-HTTP mapping of every API (settings ``REST_FRAMEWORK["EXCEPTION_HANDLER"]``).

Every API error is a JSON object ``{"code", "detail"}``: a stable machine code and a sentence for a person (plus
``errors`` by field for invalid input). A typed service error (``lexery/errors.py``) answers with its own status and
code; DRF's own exceptions keep their status with our code names. Internal exception text never reaches a client:
an unexpected exception is logged with its traceback for the operators and answered with a 500 that says nothing
of it."""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import (
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.db import InterfaceError, OperationalError
from django.http import Http404
from drf_spectacular.utils import extend_schema
from kombu.exceptions import OperationalError as BrokerError
from rest_framework import exceptions, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_handler

from lexery.errors import ServiceError

logger = logging.getLogger(__name__)

SERVER_ERROR = "The server could not complete the request; the operators have the details."
# DRF's own codes, renamed where ours are clearer; anything else keeps DRF's default_code.
CODES = {exceptions.ValidationError: "invalid_input", exceptions.ParseError: "malformed_request",
         exceptions.NotAuthenticated: "not_authenticated", exceptions.AuthenticationFailed: "not_authenticated"}


# Django refuses an oversized or overfull body with a SuspiciousOperation while DRF parses it. Outside DRF Django
# answers those with a 400 itself; inside a view they reached this handler as unknown exceptions, so a 3 MB JSON body
# or 2,000 query parameters were a 500 (fuzzing, issue 12). Each gets a stable code and a sentence of ours.
SUSPICIOUS = [
    (RequestDataTooBig, status.HTTP_413_REQUEST_ENTITY_TOO_LARGE, "request_too_large",
     "the request body is larger than the server accepts (DATA_UPLOAD_MAX_MEMORY_SIZE); files go in a multipart "
     "upload"),
    (TooManyFieldsSent, status.HTTP_400_BAD_REQUEST, "too_many_fields",
     "the request has more parameters or form fields than the server accepts (DATA_UPLOAD_MAX_NUMBER_FIELDS)"),
    (TooManyFilesSent, status.HTTP_400_BAD_REQUEST, "too_many_fields",
     "the request has more files than the server accepts (DATA_UPLOAD_MAX_NUMBER_FILES)"),
    (SuspiciousOperation, status.HTTP_400_BAD_REQUEST, "malformed_request", "the request could not be read"),
]


# A dependency down (fault injection, issue 12): the database or the task broker refusing connections is not a bug
# of the request; a 503 says to try again, and the operators get the traceback as for a 500.
UNAVAILABLE_SENTENCE = "a service this request needs is unavailable; try again shortly"


def error_response(status_code: int, code: str, detail: str, **extra: Any) -> Response:
    return Response({"code": code, "detail": detail, **extra}, status=status_code)


def _code(exc: Exception) -> str:
    if isinstance(exc, Http404):  # DRF answers Django's 404 and PermissionDenied itself
        return "not_found"
    if isinstance(exc, PermissionDenied):
        return "permission_denied"
    for kind, code in CODES.items():
        if isinstance(exc, kind):
            return code
    return str(getattr(exc, "default_code", "error"))


def _is_outage(exc: Exception) -> bool:
    """The database or the broker could not be reached: only their connection errors, not a query they refused
    (an IntegrityError or a DataError is a bug of ours, a 500)."""
    return isinstance(exc, (OperationalError, InterfaceError, BrokerError))


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ServiceError):
        return error_response(exc.status_code, exc.code, str(exc))
    for kind, status_code, code, sentence in SUSPICIOUS:
        if isinstance(exc, kind):
            logger.warning("API request refused", extra={"why": type(exc).__name__})
            return error_response(status_code, code, sentence)
    if _is_outage(exc):
        logger.exception("API request failed: a dependency is unavailable")
        return error_response(status.HTTP_503_SERVICE_UNAVAILABLE, "unavailable", UNAVAILABLE_SENTENCE)
    response = drf_handler(exc, context)
    if response is None:  # not an API exception: a bug or an outage, never the client's business
        view = context.get("view")
        logger.exception("API request failed", extra={"view": type(view).__name__ if view else None})
        return error_response(status.HTTP_500_INTERNAL_SERVER_ERROR, "server_error", SERVER_ERROR)
    data = response.data
    if isinstance(data, dict) and "detail" not in data:
        first = next(iter(data.items()), None)
        message = "invalid input"
        if first is not None:
            field, errors = first
            text = errors[0] if isinstance(errors, list) and errors else errors
            message = f"{field}: {text}"
        response.data = {"code": _code(exc), "detail": message, "errors": data}
    elif isinstance(data, list):
        response.data = {"code": _code(exc), "detail": "; ".join(str(x) for x in data)}
    elif isinstance(data, dict):
        response.data = {"code": _code(exc), **data}
    return response


@extend_schema(exclude=True)
class ApiNotFound(APIView):
    """Every path under /api/ that names no endpoint (``/api/v1/nope``, ``/api/v1/runs/`` with a slash): a 404 in
    the API's shape. Django answered those with its HTML page — in embedded mode the debug page listing every URL
    pattern. Routed last; answers before authentication, as a missing page says nothing about anyone's data."""

    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []
    throttle_classes: list[Any] = []

    def _not_found(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return error_response(status.HTTP_404_NOT_FOUND, "not_found",
                              "no such API endpoint; the endpoints are listed in the schema at /api/schema/")

    get = post = put = patch = delete = head = options = _not_found
