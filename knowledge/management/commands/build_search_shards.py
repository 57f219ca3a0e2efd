from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from documents.processing import rebuild_document_shards
from documents.retrieval import on_shards
from knowledge import edge, index


class Command(BaseCommand):
    help = ("Rebuild the Qdrant Edge search shards of the law and terms collections from the collections "
            "(knowledge/edge.py), and the shard of every ready user document that has none or one of another "
            "qdrant-edge version or embedding model (documents/shards.py, from its stored chunks). Run it after "
            "upgrading qdrant-edge-py, before the workers start: a law shard of another version is otherwise rebuilt "
            "by the first process that searches it, and a document's is not searched until rebuilt.")

    def handle(self, *args: Any, **opts: Any) -> None:
        client = index.get_client()
        for name, fields in ((settings.LLDBI_COLLECTION, index.CHUNK_KEYWORD_FIELDS),
                             (settings.LLDBI_TERMS_COLLECTION, index.TERM_KEYWORD_FIELDS)):
            built = edge.build_shard(client, name, fields)
            if built is None:
                self.stdout.write(f"{name}: no such collection, nothing to build")
            else:
                self.stdout.write(f"{name}: {built} (qdrant-edge {edge.edge_version()})")
        if on_shards():
            self.stdout.write(f"user documents: {rebuild_document_shards()} shards rebuilt")
