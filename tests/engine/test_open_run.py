"""A new run on PostgreSQL with a broker is stored by one statement (engine/store.py ``open_run``): it must hold
exactly what the ORM path (``Run.objects.create`` and ``run_start`` in a transaction) holds, and send U1 once."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import redis
from django.db import connection
from django.forms.models import model_to_dict

from engine import dispatch
from engine.models import OutboxMessage
from runs.models import Run, RunContext
from runs.services import run_create
from tenancy.models import Specialist

pytestmark = pytest.mark.django_db(transaction=True)
QUESTION = "Скільки календарних днів триває щорічна основна відпустка?"
VOLATILE = {"id", "created_at", "updated_at"}


def _stored(run_id: Any) -> tuple[dict[str, Any], dict[str, Any], list[tuple[Any, ...]]]:
    run = Run.objects.get(pk=run_id)
    fields = {f.attname: getattr(run, f.attname) for f in Run._meta.concrete_fields if f.attname not in VOLATILE}
    context = model_to_dict(RunContext.objects.get(run_id=run_id), exclude=["run"])
    outbox = list(OutboxMessage.objects.filter(run_id=run_id).values_list("stage", "attempt", "queue", "sends",
                                                                          "last_error"))
    return fields, context, outbox


def _sent_mark_written(run_id: Any, within_s: float = 5.0) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline and OutboxMessage.objects.get(run_id=run_id).sent_at is None:
        time.sleep(0.02)


def test_a_run_opened_in_one_statement_is_the_run_the_orm_stores(broker: redis.Redis, specialist: Specialist,
                                                                 monkeypatch: Any, settings: Any) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the one-statement opening is PostgreSQL's; other databases take the ORM path")
    settings.OUTBOX_SENT_MARK_DELAY_S = 0.05

    def create() -> Run:
        return run_create(org=specialist.org, specialist=specialist, question=QUESTION,
                          flag_overrides={"assembler": True}, user_ref="u-1", conversation_id="c-1")

    fast = create()
    # Sent, its mark not yet written: no second statement in the request; the batch writes it well before the
    # reaper would send the row again.
    assert OutboxMessage.objects.get(run_id=fast.pk).sends == 0
    _sent_mark_written(fast.pk)
    assert dispatch.take_sent_marks() == []
    monkeypatch.setattr("engine.store.fast", lambda: False)  # the ORM path, as on SQLite
    orm = create()

    assert _stored(fast.pk) == _stored(orm.pk)
    fields, context, outbox = _stored(fast.pk)
    assert (fields["status"], fields["steps"], fields["flag_overrides"]) == ("queued", 0, {"assembler": True})
    assert context == {"document": {}, "version": 0} and outbox == [("U1", 1, "stages", 1, "")]
    stored = Run.objects.get(pk=fast.pk)
    assert (fast.created_at, fast.updated_at) == (stored.created_at, stored.updated_at)
    assert fast.context.version == 0 and fast.context.document == {}  # attached: the API answers without a read
    sent = [json.loads(m) for m in broker.lrange("stages", 0, -1)]
    assert sorted(m["headers"]["argsrepr"] for m in sent) == sorted(
        repr([str(r.pk), "U1", 1]) for r in (fast, orm))
