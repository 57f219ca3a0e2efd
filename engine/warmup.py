"""Warm the retrieval worker at start: the in-process search indexes and the embedding model are built in a
background thread while the worker starts consuming, instead of inside the first U4 (about a minute at 51k).
A search arriving meanwhile waits for the build it would otherwise do itself."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable

from django.conf import settings

from engine.specs import RETRIEVAL_QUEUE

logger = logging.getLogger(__name__)


def _warm() -> None:
    from engine.ports import QdrantSearchPort

    started = time.monotonic()
    try:
        built = QdrantSearchPort().warm()
    except Exception:  # a failed warm-up is only a slower first search: the search builds (and reports) again
        logger.warning("retrieval warm-up failed", exc_info=True, extra={"stage": "U4"})
        return
    if built:
        logger.info("retrieval warm-up done", extra={"stage": "U4", "seconds": round(time.monotonic() - started, 1)})


def warm_retrieval(queues: Iterable[str]) -> threading.Thread | None:
    """Start the warm-up when this worker consumes the retrieval queue and LLDBI_WARM_ON_START is on."""
    if not settings.LLDBI_WARM_ON_START or RETRIEVAL_QUEUE not in set(queues):
        return None
    thread = threading.Thread(target=_warm, name="retrieval-warm-up", daemon=True)
    thread.start()
    return thread
