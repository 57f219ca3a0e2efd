"""The API's body parsers: DRF's, answering a body they cannot read with a sentence of ours.

DRF's own put the parser's exception text in the 400 (``JSON parse error - 'utf-8' codec can't decode byte 0xff in
position 0: invalid start byte``, ``Multipart form parse error - Invalid boundary in multipart: None``), and a JSON
body nested a few thousand levels deep raised a RecursionError that was a 500 (fuzzing, issue 12)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

# The sentence for a JSON body that is not JSON; the decoder's position is kept (it helps, and says nothing of us).
NOT_JSON = "the body is not valid JSON"


def _json_problem(exc: ValueError) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"{NOT_JSON}: it is not UTF-8 text"
    if isinstance(exc, json.JSONDecodeError):
        return f"{NOT_JSON} (line {exc.lineno}, column {exc.colno})"
    return f"{NOT_JSON}: NaN and Infinity are not JSON numbers"  # DRF's strict mode refuses them with a ValueError


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except ParseError as exc:
            cause = exc.__context__
            raise ParseError(_json_problem(cause) if isinstance(cause, ValueError) else NOT_JSON) from exc
        except RecursionError as exc:
            raise ParseError(f"{NOT_JSON}: it nests deeper than the server reads") from exc


class MultiPartParser(parsers.MultiPartParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except ParseError as exc:
            raise ParseError("the body is not a readable multipart/form-data body (its boundary and parts)") from exc
