"""Reads of the knowledge layer: the DocList catalog as a resolver, rebuilt only when the Act table changes."""

from __future__ import annotations

import threading
from typing import Any

from django.conf import settings
from django.db.models import Count, Max

from knowledge.doclist import Doclist, DoclistResolution
from knowledge.models import Act
from legaltext.chunking import preferred_abbreviation

_cache: dict[tuple[Any, ...], Doclist] = {}
_lock = threading.Lock()


def doclist_get() -> Doclist:
    """Lemmatising 8k titles takes seconds: built once per catalog version (row count, last update)."""
    stamp = tuple(Act.objects.aggregate(n=Count("id"), t=Max("updated_at")).values())
    with _lock:
        if stamp not in _cache:
            rows = Act.objects.values("nreg", "title", "abbreviations", "aliases", "official_numbers", "indexed")
            _cache.clear()
            _cache[stamp] = Doclist.build(rows.iterator(), max_candidates=settings.DOCLIST_MAX_CANDIDATES)
        return _cache[stamp]


def doclist_resolve(*, query: str) -> DoclistResolution:
    return doclist_get().resolve(query)


def act_corpus_ids() -> dict[str, str]:
    """Corpus ids that are not nregs ("зу ек", case-folded) → the act's nreg, from the catalog."""
    return {str(cid).lower(): nreg for nreg, ids in Act.objects.exclude(corpus_ids=[]).values_list("nreg", "corpus_ids")
            for cid in ids}


def act_names() -> dict[str, tuple[str, str | None]]:
    """The catalog's title and preferred abbreviation per act (case-folded nreg), for acts it titles."""
    return {key: (title, preferred_abbreviation(list(abbrevs or [])))
            for key, title, abbrevs in Act.objects.exclude(title="").values_list("nreg_key", "title", "abbreviations")}
