"""The I/O behind U7's non-law channels, built in the shell for one run and handed to the pure stage: the user's
memory (lexical match over their items), the user's documents (the docs collection, filtered by org and user)
and the conversation's earlier turns. Everything is scoped by the run's org and ``user_ref``; a run without a
``user_ref`` has no memory and no documents.

Every candidate's text is readable by key in the snippet store, like a law chunk, because U9 and U10 (and replay)
load evidence texts only by key: memory items and document chunks are stored when created, and a history turn is
written under a deterministic key the first time a later run uses it."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from django.conf import settings

from documents.retrieval import search_user_documents
from knowledge.embeddings import Embedder, default_embedder
from knowledge.lexical import query_vector
from knowledge.snippets import SnippetStore
from memory.matching import match_memory
from memory.selectors import memory_texts_for_user
from pipeline.contracts import ChannelHit
from runs.history import conversation_turns

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunScope:
    run_id: str
    org_id: int
    user_ref: str
    conversation_id: str
    created_at: datetime


def history_key(*, org_id: int, run_id: str) -> str:
    return f"history/{org_id}/{run_id}.txt"  # runs/lifecycle.py deletes it when the run is purged


class ChannelPort:
    def __init__(self, scope: RunScope, store: SnippetStore, embedder: Embedder | None = None) -> None:
        self.scope = scope
        self.store = store
        self._embedder = embedder

    @cached_property
    def embedder(self) -> Embedder:
        return self._embedder or default_embedder()

    def memory(self, question: str, limit: int) -> list[ChannelHit]:
        s = self.scope
        if not s.user_ref:
            return []
        rows = memory_texts_for_user(org_id=s.org_id, user_ref=s.user_ref, limit=settings.MEMORY_SCAN_MAX_ITEMS)
        keys = {item_id: key for item_id, _, key in rows}
        matches = match_memory(question, [(item_id, text) for item_id, text, _ in rows], limit=limit)
        return [ChannelHit(source="memory", label=f"memory:{m.item_id[:8]}", r2_key=keys[m.item_id], score=m.score,
                           heading="Зі слів користувача (запам'ятований факт)") for m in matches]

    def docs(self, question: str, limit: int) -> list[ChannelHit]:
        s = self.scope
        if not s.user_ref:
            return []
        found = search_user_documents(org_id=s.org_id, user_ref=s.user_ref,
                                      dense=self.embedder.embed_query([question])[0].tolist(),
                                      sparse=query_vector(question), embed_model=self.embedder.name, limit=limit)
        hits = []
        for payload, score, document in found:
            n = int(payload.get("ordinal", 0))
            hits.append(ChannelHit(source="doc", label=f"doc:{document.filename}#{n + 1}", r2_key=payload["r2_key"],
                                   score=score,
                                   heading=f"Документ користувача «{document.filename}», фрагмент {n + 1}"))
        return hits

    def previous_question(self) -> str | None:
        """The conversation's last finished question (U3 reads an elliptic follow-up together with it)."""
        s = self.scope
        turns = conversation_turns(org_id=s.org_id, user_ref=s.user_ref, conversation_id=s.conversation_id,
                                   before=s.created_at, exclude_run_id=s.run_id, limit=1)
        return turns[0].question if turns else None

    def history(self, limit: int) -> list[ChannelHit]:
        s = self.scope
        turns = conversation_turns(org_id=s.org_id, user_ref=s.user_ref, conversation_id=s.conversation_id,
                                   before=s.created_at, exclude_run_id=s.run_id, limit=limit)
        hits = []
        for age, turn in enumerate(turns):
            key = history_key(org_id=s.org_id, run_id=turn.run_id)
            if not self.store.storage.exists(key):  # a finished turn never changes: written once
                self.store.put(key, f"Запитання: {turn.question}\nВідповідь: {turn.answer}")
            hits.append(ChannelHit(source="history", label=f"history:{age + 1}", r2_key=key,
                                   score=round(1.0 / (1 + age), 6),  # the latest turn matters most
                                   heading=f"Попередній обмін у цій розмові ({turn.created_at:%Y-%m-%d %H:%M})"))
        return hits
