"""The yardstick for the engine's overhead (issue 11): a bare chain of twelve Celery tasks, each of which locks,
reads and writes one JSONB row and sends the next — what Celery, the broker and PostgreSQL cost with no engine.
The worker of ``bench/engine_overhead.py`` imports this module (``-I bench.bare_chain``)."""

from __future__ import annotations

from celery import shared_task
from django.db import connection, transaction

TABLE = "bench_bare_chain"
LINKS = 12


def create_table() -> None:
    with connection.cursor() as cur:
        cur.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} (id text PRIMARY KEY, doc jsonb NOT NULL, "
                    "started timestamptz NOT NULL DEFAULT clock_timestamp(), finished timestamptz)")


@shared_task(name="bench.bare_link", acks_late=True, ignore_result=True)
def bare_link(chain_id: str, link: int) -> None:
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(f"SELECT doc FROM {TABLE} WHERE id = %s FOR UPDATE", [chain_id])
        cur.fetchone()  # read the document, as a stage reads its context
        done = link + 1 >= LINKS
        cur.execute(f"UPDATE {TABLE} SET doc = doc || jsonb_build_object(%s::text, %s::int), "
                    f"finished = CASE WHEN %s THEN clock_timestamp() END WHERE id = %s",
                    [f"U{link + 1}", link, done, chain_id])
        if not done:
            transaction.on_commit(lambda: bare_link.apply_async(args=[chain_id, link + 1], queue="bench"))
