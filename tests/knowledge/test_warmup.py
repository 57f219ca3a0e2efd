"""Warming the retrieval worker at start (engine/warmup.py): the in-process indexes and the model are built before
the first U4 needs them, and only on a worker that runs U4."""

from __future__ import annotations

from typing import Any

from django.conf import settings as django_settings

from engine.warmup import warm_retrieval
from knowledge import index, searchindex, termindex


def test_a_retrieval_worker_builds_the_search_indexes_as_it_starts(lldbi_index: dict[str, int],
                                                                  settings: Any) -> None:
    searchindex.invalidate()
    termindex.invalidate()
    chunks, terms_name = django_settings.LLDBI_COLLECTION, django_settings.LLDBI_TERMS_COLLECTION
    assert not searchindex.is_built(chunks) and not termindex.is_built(terms_name)
    settings.LLDBI_WARM_ON_START = True
    thread = warm_retrieval(["stages", "retrieval"])
    assert thread is not None
    thread.join(timeout=120)
    assert not thread.is_alive()
    # both indexes were built by the warm-up, before any search asked for them
    assert searchindex.is_built(chunks) and termindex.is_built(terms_name)
    client = index.get_client()
    assert len(searchindex.get_index(client, chunks).payloads) > 0
    terms = termindex.get_term_index(client, terms_name)
    assert any(p["term"] == "дізнавач" for p in terms.payloads)


def test_no_warm_up_off_the_retrieval_queue_or_when_turned_off(settings: Any) -> None:
    settings.LLDBI_WARM_ON_START = True
    assert warm_retrieval(["stages", "llm"]) is None
    settings.LLDBI_WARM_ON_START = False
    assert warm_retrieval(["retrieval"]) is None
