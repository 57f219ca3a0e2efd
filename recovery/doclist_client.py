"""The DocList client U6 calls: in-process against the catalog table by default, over HTTP when
``DOCLIST_API_URL`` points at a DocList (this app's ``POST /api/v1/doclist/resolve`` or a compatible worker),
and off when ``DOCLIST_ENABLED`` is false.

    resolution = resolve("процесуальний кодекс")
    resolution.reason       # ACT_FOUND_AND_INDEXED | ACT_FOUND_IN_CATALOG_NOT_INDEXED | AMBIGUOUS_ACT_MATCH
                            # | ACT_NOT_FOUND_IN_CATALOG | DOCLIST_DISABLED
    resolution.candidates   # DoclistCandidate(nreg, title, abbreviations, indexed, score, how), best first

A remote DocList that cannot answer (timeout, connection refused, 5xx, a malformed body) raises
``DoclistUnavailable``: the seed's U6 then falls back to a direct retry or forwards, it never guesses.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass

from knowledge.doclist import DoclistCandidate, DoclistResolution

DOCLIST_DISABLED = "DOCLIST_DISABLED"
RESOLVE_PATH = "/api/v1/doclist/resolve"

__all__ = ["DOCLIST_DISABLED", "DoclistCandidate", "DoclistClient", "DoclistResolution", "DoclistUnavailable",
           "default_client", "resolve"]


class DoclistUnavailable(Exception):
    """The remote DocList did not give a usable answer; the message says why."""


@dataclass(frozen=True)
class DoclistClient:
    enabled: bool = True
    api_url: str = ""  # empty: resolve in this process against the Act table
    api_key: str = ""
    timeout_s: float = 5.0

    @property
    def mode(self) -> str:
        return "disabled" if not self.enabled else ("remote" if self.api_url else "local")

    def resolve(self, query: str) -> DoclistResolution:
        if not self.enabled:
            return DoclistResolution(query, DOCLIST_DISABLED)
        if not self.api_url:
            from knowledge.selectors import doclist_resolve

            return doclist_resolve(query=query)
        return self._remote(query)

    def _remote(self, query: str) -> DoclistResolution:
        url = self.api_url.rstrip("/")
        if not url.endswith(RESOLVE_PATH):
            url += RESOLVE_PATH
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(url, data=json.dumps({"query": query}).encode(), headers=headers,
                                         method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                body = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:200]
            raise DoclistUnavailable(f"DocList at {url} answered HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise DoclistUnavailable(f"DocList at {url} is unreachable: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise DoclistUnavailable(f"DocList at {url} answered with something that is not JSON") from exc
        try:
            return DoclistResolution.from_dict({**body, "query": query})
        except (KeyError, TypeError, ValueError) as exc:
            raise DoclistUnavailable(f"DocList at {url} answered without a reason code: {exc}") from exc


def default_client() -> DoclistClient:
    from django.conf import settings

    return DoclistClient(enabled=settings.DOCLIST_ENABLED, api_url=settings.DOCLIST_API_URL,
                         api_key=settings.DOCLIST_API_KEY, timeout_s=settings.DOCLIST_TIMEOUT_S)


def resolve(query: str) -> DoclistResolution:
    """Resolve with the configured client (see the module docstring)."""
    return default_client().resolve(query)
