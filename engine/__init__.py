"""The engine: runs the twelve stages as Celery tasks (or in-process in the embedded mode). ORCH (orch/) decides
what runs next; the engine claims, computes, persists and sends. Everything else enters through ``engine.entry``."""
