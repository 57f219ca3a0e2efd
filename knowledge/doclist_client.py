"""The DocList client U6 calls (through engine/stage_env.doclist_port): in-process against the catalog table by
default, over HTTP when ``DOCLIST_API_URL`` points at a DocList (this app's ``POST /api/v1/doclist/resolve`` or a
compatible worker), and off when ``DOCLIST_ENABLED`` is false. It lives beside the catalog it reads, so U6's pure
code in recovery/ never reaches up into knowledge/.

    resolution = resolve("процесуальний кодекс")
    resolution.reason       # ACT_FOUND_AND_INDEXED | ACT_FOUND_IN_CATALOG_NOT_INDEXED | AMBIGUOUS_ACT_MATCH
                            # | ACT_NOT_FOUND_IN_CATALOG | DOCLIST_DISABLED
    resolution.candidates   # DoclistCandidate(nreg, title, abbreviations, indexed, score, how), best first

A remote DocList that cannot answer (timeout, connection refused, 5xx, a malformed body) raises
``DoclistUnavailable``: the seed's U6 then falls back to a direct retry or forwards, it never guesses.

The client carries a Bearer key, so it follows no redirect (a 3xx would hand the key to another host), speaks
https unless ``DOCLIST_ALLOW_HTTP`` says otherwise (a private network, tests), and reads at most
``DOCLIST_MAX_RESPONSE_BYTES`` of an answer.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from knowledge.doclist import DoclistResolution
from knowledge.selectors import doclist_resolve
from pipeline.contracts import DOCLIST_DISABLED

RESOLVE_PATH = "/api/v1/doclist/resolve"

__all__ = ["DoclistClient", "DoclistUnavailable", "default_client", "resolve"]


class DoclistUnavailable(Exception):
    """The remote DocList did not give a usable answer; the message says why."""


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        raise urllib.error.HTTPError(req.full_url, code, f"redirect to {newurl} refused", headers, fp)


_OPENER = urllib.request.build_opener(_NoRedirects)


@dataclass(frozen=True)
class DoclistClient:
    enabled: bool = True
    api_url: str = ""  # empty: resolve in this process against the Act table
    api_key: str = ""
    timeout_s: float = 5.0
    allow_http: bool = False
    max_response_bytes: int = 1024 * 1024

    @property
    def mode(self) -> str:
        return "disabled" if not self.enabled else ("remote" if self.api_url else "local")

    def resolve(self, query: str) -> DoclistResolution:
        if not self.enabled:
            return DoclistResolution(query, DOCLIST_DISABLED)
        if not self.api_url:
            return doclist_resolve(query=query)
        return self._remote(query)

    def _remote(self, query: str) -> DoclistResolution:
        url = self.api_url.rstrip("/")
        if not url.endswith(RESOLVE_PATH):
            url += RESOLVE_PATH
        scheme = urllib.parse.urlsplit(url).scheme.lower()
        if scheme != "https" and not (scheme == "http" and self.allow_http):
            raise DoclistUnavailable(f"DocList at {url}: only https is allowed (DOCLIST_ALLOW_HTTP for http)")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(url, data=json.dumps({"query": query}).encode(), headers=headers,
                                         method="POST")
        try:
            with _OPENER.open(request, timeout=self.timeout_s) as response:
                raw = response.read(self.max_response_bytes + 1)
            if len(raw) > self.max_response_bytes:
                raise DoclistUnavailable(f"DocList at {url} answered more than {self.max_response_bytes} bytes "
                                         "(DOCLIST_MAX_RESPONSE_BYTES)")
            body = json.loads(raw.decode("utf-8"))
        except urllib.error.HTTPError as exc:
            detail = exc.read(200).decode("utf-8", "replace") if exc.fp else str(exc.msg)
            raise DoclistUnavailable(f"DocList at {url} answered HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise DoclistUnavailable(f"DocList at {url} is unreachable: {exc}") from exc
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DoclistUnavailable(f"DocList at {url} answered with something that is not JSON") from exc
        try:
            return DoclistResolution.from_dict({**body, "query": query})
        except (KeyError, TypeError, ValueError) as exc:
            raise DoclistUnavailable(f"DocList at {url} answered without a reason code: {exc}") from exc


def default_client() -> DoclistClient:
    from django.conf import settings

    return DoclistClient(enabled=settings.DOCLIST_ENABLED, api_url=settings.DOCLIST_API_URL,
                         api_key=settings.DOCLIST_API_KEY, timeout_s=settings.DOCLIST_TIMEOUT_S,
                         allow_http=settings.DOCLIST_ALLOW_HTTP, max_response_bytes=settings.DOCLIST_MAX_RESPONSE_BYTES)


def resolve(query: str) -> DoclistResolution:
    """Resolve with the configured client (see the module docstring)."""
    return default_client().resolve(query)
