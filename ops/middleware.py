"""A request id on every log line of a web request and on its response (``X-Request-ID``); the API in English."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import translation

from lexery.logging import bind_request

HEADER = "X-Request-ID"
API_PREFIX = "/api/"
# A caller's id is kept when it is a plain token of at most this many characters (a proxy's or a client's trace id);
# anything else (spaces, quotes, control characters, a kilobyte of text) is replaced, never logged as given.
_ACCEPTED = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def request_id_for(given: str | None) -> str:
    if given and _ACCEPTED.fullmatch(given):
        return given
    return uuid.uuid4().hex


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_for(request.headers.get(HEADER))
        request.request_id = request_id  # type: ignore[attr-defined]  # for views that want to show it
        with bind_request(request_id):
            response = self.get_response(request)
        response[HEADER] = request_id
        return response


class ApiLanguageMiddleware:
    """The API speaks English whatever the console's language (``LANGUAGE_CODE`` is Ukrainian for operators): DRF's
    own validation sentences («This field is required.») are translated when they are raised, so without this an API
    client read «Це поле обов'язкове.» beside our English sentences. Codes are the contract; sentences are English."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        with translation.override("en"):
            return self.get_response(request)
