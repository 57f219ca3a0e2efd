"""qdrant-client's ``models``, imported on first use.

Importing qdrant-client takes over a second (pydantic builds some 300 models): a process that only searches the
Edge shards (knowledge/edge.py) — ``manage.py ask``, a retrieval worker — never touches it, and the web process
imports the modules that name it only to register the admin. Type checkers see the real module.
"""

from __future__ import annotations

import importlib
from typing import Any


class _Models:
    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("qdrant_client.models"), name)


models = _Models()
