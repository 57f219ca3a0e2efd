"""The stage shell's two statements on PostgreSQL: a stage costs one claim and one persist, each a single statement
and so atomic on its own (autocommit: no BEGIN and COMMIT round trips, which bench/stage_profile.py showed to be
the largest share of the engine's overhead, issue 11 item 7).

- ``claim``: locks the run, inserts the attempt's event (the unique (run, stage, attempt) makes a second claim a
  no-op), counts the step, marks sent the outbox rows this process sent since its last claim, and returns the run,
  its specialist, the document and the run's attempts; committed without waiting for its WAL flush (the persist's
  flush carries it). None when it inserted nothing: the shell then takes its locked ORM path, which tells why
  (finished, held by another delivery, redelivered, the run not runnable).
- ``persist``: under the run's and the context's row locks, version-checked, writes only the sections that
  changed (``jsonb ||`` and ``-``, not the whole ~21 KB document), finishes the event, updates the run when the
  decision ends it (or U1 snapshots its flags) and inserts the next stage's outbox row — all or nothing.

Other databases (the embedded SQLite default) use the ORM transactions in engine/shell.py."""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Self

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection
from django.db.backends.utils import CursorWrapper
from django.db.models import Field, Model

from engine.models import OutboxMessage
from runs.models import Run, RunContext, StageEvent
from tenancy.models import Specialist

# What a claim reads of the attempt's event (the shell's ORM path reads the same fields of every event).
CLAIM_EVENT_FIELDS = ("id", "run_id", "stage", "attempt", "step", "outcome", "started_at", "claimed_at",
                      "deliveries")
RUNNABLE = (Run.Status.QUEUED, Run.Status.RUNNING)


# psycopg prepares a statement seen this many times; the claim and the persist ask on their first run. Django's own
# cursors bind on the client and are never prepared, so nothing else changes on the connection.
_PREPARE_ONLY_WHEN_ASKED = 2**31 - 1


@functools.cache
def _preparing_cursor_class() -> type[Any]:
    """Built on first use: psycopg is imported only where PostgreSQL is (an embedded SQLite process never loads it)."""
    import psycopg

    class _PreparingCursor(psycopg.Cursor[Any]):
        """psycopg's cursor that binds on the server, every statement prepared (``prepare=True``) once per
        connection (psycopg keeps the names, ``prepared_max`` of them)."""

        def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None,
                    binary: bool | None = None) -> Self:
            return super().execute(query, params, prepare=True, binary=binary)

        def _send_query_prepared(self, name: bytes, pgq: Any, *, binary: bool | None = None) -> None:
            # psycopg keeps the statement for Django's query log (``last_executed_query`` reads ``_query``) only when
            # it runs unprepared: without this, DEBUG logs and CaptureQueriesContext would record ``None``.
            self._query = pgq
            super()._send_query_prepared(name, pgq, binary=binary)

    return _PreparingCursor


@dataclass
class Claim:
    run: Run
    event: StageEvent
    snapshot: RunContext  # the document as the claim read it
    attempts: Counter[str]  # how often each stage has run, this attempt included (ORCH decides on it)
    limits_unrecorded: bool = False  # the run's first stage: its persist writes ``run.limits``


@dataclass(frozen=True)
class Persisted:
    """What the persist found under its locks: nothing was written unless the version matched and the run had not
    ended. ``outbox_id``: the next stage's row, None when none was decided or it existed already."""

    status: str
    version: int
    outbox_id: int | None
    event_id: int | None = None  # the event an unclaimed persist inserted (None: it wrote nothing)

    def written(self, expected_version: int) -> bool:
        return self.version == expected_version and self.status not in Run.TERMINAL


def fast() -> bool:
    """The single-statement path needs PostgreSQL (data-modifying WITH, ``ON CONFLICT``, ``jsonb`` operators)."""
    return connection.vendor == "postgresql"


def _trust_connection() -> bool:
    """Skip Django's health check (a ``SELECT 1`` round trip before the first query of every task) for the claim,
    which detects a dead connection itself: it is one statement in autocommit, so on a connection that died while
    the worker was idle it ran nothing, and ``claim`` replaces the connection and claims again (``_replaced``) —
    what the health check would have done, one round trip a stage cheaper (~0.25 ms inside the bench worker). A
    connection that dies after the claim committed is no different from before: the second claim finds the
    attempt held and leaves it to the reaper. True when the check was skipped.
    Never inside a caller's transaction (its first query checked the connection already, and a connection there
    cannot be replaced)."""
    wrapper: Any = connection  # the health check's attributes are Django's, not in its type stubs
    if wrapper.connection is None or wrapper.in_atomic_block or wrapper.health_check_done or \
            not wrapper.health_check_enabled:
        return False
    wrapper.health_check_done = True
    return True


def _replaced() -> bool:
    """After a claim failed on a connection whose health check it skipped: True when that connection is dead and
    was closed (the next cursor opens a new one), False when it works (the error was the statement's own)."""
    if connection.is_usable():
        return False
    connection.close()
    return True


def _prepared_cursor() -> CursorWrapper:
    """A cursor that binds parameters on the server (Django binds them into the text) and prepares each statement
    on its first run in a connection: the claim and the persist keep one text each (a few variants of the persist),
    and PostgreSQL stops parsing and planning them for every stage — the claim's planning (~0.4 ms under load) cost
    more than its execution (~0.15 ms). Django leaves psycopg's automatic preparation off for the sake of
    transaction-mode poolers; ``ENGINE_PREPARED_STATEMENTS`` turns this off for those. Opened as
    ``connection.cursor()`` opens one (health check, error wrapping, the query log the query-count tests read)."""
    if not settings.ENGINE_PREPARED_STATEMENTS:
        return connection.cursor()
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    raw = connection.connection
    with connection.wrap_database_errors:
        plain_cursor: Any = _preparing_cursor_class()(raw)
        cursor = connection.make_debug_cursor(plain_cursor) if connection.queries_logged else \
            connection.make_cursor(plain_cursor)
    if raw.prepare_threshold is None:  # Django's setting: psycopg would prepare nothing, even when asked
        raw.prepare_threshold = _PREPARE_ONLY_WHEN_ASKED
        # Once per connection. Left to choose, PostgreSQL kept planning the claim anew at every run (its generic
        # plan's estimate looked dearer than a plan for the values at hand). Every prepared statement of this
        # connection is one of these primary-key lookups, so the plan made once serves them all; Django's own
        # queries are never prepared and so never see this setting.
        with connection.cursor() as plain:
            plain.execute("SET plan_cache_mode = force_generic_plan")
    return cursor


def _fields(model: type[Model], names: Sequence[str] | None = None) -> list[Field[Any, Any]]:
    return [f for f in model._meta.concrete_fields if names is None or f.attname in names]


def _select(alias: str, fields: list[Field[Any, Any]]) -> str:
    return ", ".join(f'{alias}."{f.column}"' for f in fields)


def _build(model: type[Model], fields: list[Field[Any, Any]], values: Sequence[Any]) -> Any:
    """A model instance from a raw row, as the ORM would load it (JSON text decoded by its field)."""
    converted = [v if v is None or not hasattr(f, "from_db_value") else f.from_db_value(v, None, connection)
                 for f, v in zip(fields, values, strict=True)]
    return model.from_db(connection.alias, [f.attname for f in fields], converted)


_RUN_FIELDS = _fields(Run)
_SPECIALIST_FIELDS = _fields(Specialist)
_CONTEXT_FIELDS = _fields(RunContext)
_EVENT_FIELDS = _fields(StageEvent, CLAIM_EVENT_FIELDS)
_EVENT_RETURNING = ", ".join(f'"{f.column}"' for f in _EVENT_FIELDS)
RUNS, CONTEXTS, EVENTS = Run._meta.db_table, RunContext._meta.db_table, StageEvent._meta.db_table
SPECIALISTS, OUTBOX = Specialist._meta.db_table, OutboxMessage._meta.db_table
# The document only when this process does not hold it at the version stored (``_held``): not read, not sent.
_CONTEXT_SELECT = ", ".join(
    'CASE WHEN c."version" = %(held_version)s THEN NULL ELSE c."document" END' if f.attname == "document"
    else f'c."{f.column}"' for f in _CONTEXT_FIELDS)
_CLAIM_TEMPLATE = f"""
WITH locked AS (
    SELECT id, steps FROM {RUNS} WHERE id = %(run)s AND status = ANY(%(runnable)s::text[]) FOR UPDATE
), claimed AS (
    INSERT INTO {EVENTS} (run_id, stage, attempt, step, started_at, claimed_at, outcome, deliveries,
                                 next_action, decided_by, reason, detail)
    SELECT id, %(stage)s, %(attempt)s, steps + 1, %(now)s, %(now)s, %(running)s, 1, '', '', '', '{{}}'::jsonb
    FROM locked
    ON CONFLICT (run_id, stage, attempt) DO NOTHING
    RETURNING {_EVENT_RETURNING}
), counted AS (
    UPDATE {RUNS} SET steps = claimed.step, status = %(running_run)s, current_stage = %(stage)s,
                        started_at = COALESCE({RUNS}.started_at, %(now)s), updated_at = %(now)s
    FROM claimed WHERE {RUNS}.id = claimed.run_id
    RETURNING {RUNS}.*
), relaxed AS (
    -- The claim needs no flush of its own: the stage's persist commits synchronously and so flushes the claim's
    -- WAL with it; a claim lost with a database crash before that is a claim that never happened (the
    -- redelivered message claims again). One fsync per stage instead of two. Only when the statement is its own
    -- transaction: inside a caller's, the setting would reach that transaction's other writes.
    SELECT set_config('synchronous_commit',
                      CASE WHEN %(relax)s THEN 'off' ELSE current_setting('synchronous_commit') END, true) AS setting
)
{{marked}}SELECT {_select("counted", _RUN_FIELDS)}, {_select("s", _SPECIALIST_FIELDS)}, {_CONTEXT_SELECT},
       {_select("claimed", _EVENT_FIELDS)},
       ARRAY(SELECT e.stage FROM {EVENTS} e WHERE e.run_id = %(run)s)
FROM counted
CROSS JOIN relaxed
JOIN claimed ON claimed.run_id = counted.id
JOIN {SPECIALISTS} s ON s.id = counted.specialist_id
JOIN {CONTEXTS} c ON c.run_id = counted.id
"""
# The rows this process sent since its last claim (engine/dispatch.py): only its own, so two claims never wait on
# each other's outbox rows. A list of known length, not ``= ANY(array)``: the claim runs on a generic plan
# (``_prepared_cursor``), for which an array parameter counts as ten ids, and PostgreSQL then chose to read the
# whole outbox table (a sequential scan, ~0.5 ms a claim at ~3,000 rows, growing with the table until the plan
# flips); ``IN`` of one or two parameters it reads through the primary key. No marks, no update at all.
_MARKED = f""", marked AS (
    UPDATE {OUTBOX} SET sent_at = %(now)s, sends = sends + 1, last_error = '' WHERE id IN (IDS)
)
"""


def _marked(marks: int) -> str:
    """The CTE marking ``marks`` outbox rows sent (parameters ``sent0``…), or nothing."""
    return _MARKED.replace("IDS", ", ".join(f"%(sent{i})s" for i in range(marks))) if marks else ""


@functools.cache
def claim_sql(marks: int) -> str:
    """The claim statement marking ``marks`` outbox rows sent (one prepared statement for each count)."""
    return _CLAIM_TEMPLATE.replace("{marked}", _marked(marks))


@dataclass(frozen=True)
class HeldDocument:
    """The document this process last persisted, exactly as the database holds it at ``version`` (every writer of
    a RunContext raises its version, so the pair names one content). The next stage of the same run, claimed by
    this process, reads it from here instead of receiving ~21 KB again. Read-only by convention, as every
    snapshot is: stages parse it into typed sections and ``apply`` copies before it writes.
    ``run`` and ``attempts``: the run as this process last wrote it (its ``steps`` the database's then) and the
    attempts ORCH decided on — what engine/held.py runs the next stage on without a claim."""

    run_id: str
    version: int
    document: Mapping[str, Any]
    run: Run | None = None
    attempts: Counter[str] | None = None
    next: tuple[str, int] | None = None  # the (stage, attempt) this process decided and sent after it


_held: HeldDocument | None = None


def _hold(held: HeldDocument | None) -> None:
    global _held  # one document per process: the run it computes next is usually the one it just persisted
    _held = held


def held(run_id: str) -> HeldDocument | None:
    """What this process holds of ``run_id``: its document, and its run, attempts and next stage when ``keep_run``
    added them."""
    return _held if _held is not None and _held.run_id == run_id else None


def keep_run(run: Run, attempts: Counter[str], next_stage: NextStage | None) -> None:
    """Beside the document just persisted (``persist``): the run and the attempts of the stage that persisted it, and
    the stage it sent next — the one message this process may run without a claim (engine/held.py)."""
    if _held is not None and _held.run_id == str(run.pk):
        sent = (next_stage.stage, next_stage.attempt) if next_stage is not None else None
        _hold(replace(_held, run=run, attempts=Counter(attempts), next=sent))


def drop_held() -> None:
    """Forget what this process holds (a statement whose outcome is unknown: the next stage claims and reads)."""
    _hold(None)


def claim(run_id: str, stage: str, attempt: int, now: datetime, sent: list[int]) -> Claim | None:
    """One statement: the attempt claimed and everything the stage needs read. ``sent``: outbox ids this process
    handed to the broker, marked sent here (they ride on this round trip instead of costing their own)."""
    held = _held if _held is not None and _held.run_id == run_id else None
    params: dict[str, Any] = {"run": run_id, "stage": stage, "attempt": attempt, "now": now,
                              "held_version": held.version if held is not None else -1,
                              "relax": not connection.in_atomic_block,
                              "runnable": [str(s) for s in RUNNABLE], "running": str(StageEvent.Outcome.RUNNING),
                              "running_run": str(Run.Status.RUNNING)}
    params.update((f"sent{i}", outbox_id) for i, outbox_id in enumerate(sent))
    sql = claim_sql(len(sent))
    trusted = _trust_connection()
    try:
        row = _claim_row(sql, params)
    except (OperationalError, InterfaceError):
        if not (trusted and _replaced()):
            raise
        row = _claim_row(sql, params)  # on a new connection
    if row is None:
        return None
    cuts = _offsets(len(_RUN_FIELDS), len(_SPECIALIST_FIELDS), len(_CONTEXT_FIELDS), len(_EVENT_FIELDS))
    run: Run = _build(Run, _RUN_FIELDS, row[cuts[0]:cuts[1]])
    run.specialist = _build(Specialist, _SPECIALIST_FIELDS, row[cuts[1]:cuts[2]])
    snapshot: RunContext = _build(RunContext, _CONTEXT_FIELDS, row[cuts[2]:cuts[3]])
    if snapshot.document is None:  # the statement saw the held version: the same content
        assert held is not None and held.version == snapshot.version
        snapshot.document = dict(held.document)
    snapshot.run = run
    event: StageEvent = _build(StageEvent, _EVENT_FIELDS, row[cuts[3]:cuts[4]])
    event.run = run
    # The statement's snapshot predates its own insert: the attempt just claimed is counted here.
    attempts = Counter(row[cuts[4]] or ())
    attempts[stage] += 1
    return Claim(run, event, snapshot, attempts)


def _claim_row(sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
    with _prepared_cursor() as cursor:
        cursor.execute(sql, params)
        row: tuple[Any, ...] | None = cursor.fetchone()
    return row


def _offsets(*sizes: int) -> list[int]:
    cuts = [0]
    for size in sizes:
        cuts.append(cuts[-1] + size)
    return cuts


@dataclass(frozen=True)
class EventFinish:
    outcome: str
    finished_at: datetime
    duration_ms: int | None
    compute_ms: int | None
    next_action: str
    decided_by: str
    reason: str
    detail: Mapping[str, object]


@dataclass(frozen=True)
class NextStage:
    stage: str
    attempt: int
    queue: str


# Run columns a persist may set (U1's flag snapshot, the bounds recorded by a run's first stage, the end of a run):
# fixed names, never from input.
RUN_COLUMNS = ("flags", "limits", "status", "error", "finished_at")
_JSON_RUN_COLUMNS = ("flags", "limits")


def changed_sections(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """What turns ``before`` into ``after`` at the top level: the sections set (new or changed) and those dropped.
    Unchanged sections are the same objects (``pipeline.document.apply`` copies the document shallowly), so the
    identity test settles most of them without comparing."""
    changed = {k: v for k, v in after.items() if k not in before or (before[k] is not v and before[k] != v)}
    return changed, [k for k in before if k not in after]


@dataclass(frozen=True)
class Unclaimed:
    """An attempt this process computed on the document it holds, without a claim (engine/held.py): the persist
    inserts its event already finished and counts its step, and writes anything only if the run is still running
    at ``steps`` — no claim of any stage since this process wrote it — and the attempt has no event yet. ``sent``:
    outbox ids this process handed to the broker, marked sent by this statement (what a claim would have carried)."""

    stage: str
    attempt: int
    started_at: datetime
    steps: int
    sent: Sequence[int] = ()


def persist(*, run_id: str, event_id: int | None, version: int, before: Mapping[str, Any],
            after: Mapping[str, Any], finish: EventFinish, run_changes: Mapping[str, object],
            next_stage: NextStage | None, now: datetime, unclaimed: Unclaimed | None = None) -> Persisted:
    """One statement: written only if the context is still at ``version`` and the run has not ended. ``event_id``:
    the claimed attempt's event, finished here; None with ``unclaimed``, whose event this statement inserts."""
    changed, dropped = changed_sections(before, after)
    # As UTF-8, not \u escapes: the sections are Ukrainian text, a third of the bytes to send and for jsonb to parse.
    changed_json = json.dumps(changed, ensure_ascii=False)
    params: dict[str, Any] = {
        "run": run_id, "version": version, "terminal": [str(s) for s in Run.TERMINAL], "now": now,
        "set": changed_json, "drop": dropped, "event": event_id, "outcome": finish.outcome,
        "finished_at": finish.finished_at, "duration_ms": finish.duration_ms, "compute_ms": finish.compute_ms,
        "next_action": finish.next_action, "decided_by": finish.decided_by, "reason": finish.reason,
        "detail": json.dumps(finish.detail, ensure_ascii=False)}
    # ``gate``: what every write waits on — the checks under the locks, or (unclaimed) the event this statement
    # inserted, which exists only if they passed and no other delivery holds the attempt.
    if unclaimed is None:
        parts, gate = [_PERSIST_CLAIMED], "ok"
    else:
        parts, gate = [_persist_unclaimed_head(len(unclaimed.sent))], "finished"
        params.update({"running": str(Run.Status.RUNNING), "steps": unclaimed.steps, "stage": unclaimed.stage,
                       "attempt": unclaimed.attempt, "started_at": unclaimed.started_at})
        params.update((f"sent{i}", outbox_id) for i, outbox_id in enumerate(unclaimed.sent))
    parts.append(f""", context AS (
    UPDATE {CONTEXTS} SET document = (document || %(set)s::jsonb) - %(drop)s::text[],
                               version = version + 1, updated_at = %(now)s
    WHERE run_id = %(run)s AND EXISTS (SELECT 1 FROM {gate})
)""")
    assignments = [] if unclaimed is None else ['"steps" = %(steps)s + 1', '"current_stage" = %(stage)s']
    for column, value in run_changes.items():
        if column not in RUN_COLUMNS:
            raise ValueError(f"a persist does not set {RUNS}.{column}")
        cast = "::jsonb" if column in _JSON_RUN_COLUMNS else ""
        assignments.append(f'"{column}" = %(run_{column})s{cast}')
        params[f"run_{column}"] = json.dumps(value) if column in _JSON_RUN_COLUMNS else value
    if assignments:
        parts.append(f""", ended AS (
    UPDATE {RUNS} SET {", ".join(assignments)}, updated_at = %(now)s
    WHERE id = %(run)s AND EXISTS (SELECT 1 FROM {gate})
)""")
    outbox = "NULL::bigint"
    if next_stage is not None:
        params.update({"next_stage": next_stage.stage, "next_attempt": next_stage.attempt,
                       "next_queue": next_stage.queue})
        parts.append(f""", outbox AS (
    INSERT INTO {OUTBOX} (run_id, stage, attempt, queue, created_at, sends, last_error)
    SELECT %(run)s, %(next_stage)s, %(next_attempt)s, %(next_queue)s, %(now)s, 0, '' FROM {gate}
    ON CONFLICT (run_id, stage, attempt) DO NOTHING
    RETURNING id
)""")
        outbox = "(SELECT id FROM outbox)"
    inserted = "NULL::bigint" if unclaimed is None else "(SELECT id FROM finished)"
    parts.append(f"\nSELECT status, version, {outbox}, {inserted} FROM locked")
    with _prepared_cursor() as cursor:
        cursor.execute("".join(parts), params)
        row = cursor.fetchone()
    if row is None:
        raise Run.DoesNotExist(f"run {run_id} or its context is gone")
    persisted = Persisted(status=row[0], version=row[1], outbox_id=row[2], event_id=row[3])
    if persisted.written(version) and (unclaimed is None or persisted.event_id is not None):
        # What the database now holds, built as it built it: ``before`` (exact: read from it, or held) with the
        # changed sections as they travelled (JSON text) on top, the dropped ones gone.
        document = {k: v for k, v in before.items() if k not in dropped}
        document.update(json.loads(changed_json))
        _hold(HeldDocument(run_id, version + 1, document))
    return persisted


_PERSIST_CLAIMED = f"""
WITH locked AS (
    SELECT r.status, c.version FROM {RUNS} r JOIN {CONTEXTS} c ON c.run_id = r.id
    WHERE r.id = %(run)s FOR UPDATE OF r, c
), ok AS (
    SELECT 1 FROM locked WHERE version = %(version)s AND NOT status = ANY(%(terminal)s::text[])
), finished AS (
    UPDATE {EVENTS} SET outcome = %(outcome)s, finished_at = %(finished_at)s, duration_ms = %(duration_ms)s,
        compute_ms = %(compute_ms)s, next_action = %(next_action)s, decided_by = %(decided_by)s,
        reason = %(reason)s, detail = %(detail)s::jsonb
    WHERE id = %(event)s AND EXISTS (SELECT 1 FROM ok)
)"""


@functools.cache
def _persist_unclaimed_head(marks: int) -> str:
    """The locks, the checks, the event inserted finished (a claim of the same attempt by another delivery makes it
    a no-op), and the sent marks this process owes — they are written whatever the checks find, as a claim's are."""
    return f"""
WITH locked AS (
    SELECT r.status, r.steps, c.version FROM {RUNS} r JOIN {CONTEXTS} c ON c.run_id = r.id
    WHERE r.id = %(run)s FOR UPDATE OF r, c
), ok AS (
    SELECT 1 FROM locked WHERE version = %(version)s AND status = %(running)s AND steps = %(steps)s
), finished AS (
    INSERT INTO {EVENTS} (run_id, stage, attempt, step, started_at, claimed_at, outcome, deliveries, finished_at,
                                 duration_ms, compute_ms, next_action, decided_by, reason, detail)
    SELECT %(run)s, %(stage)s, %(attempt)s, %(steps)s + 1, %(started_at)s, %(started_at)s, %(outcome)s, 1,
           %(finished_at)s, %(duration_ms)s, %(compute_ms)s, %(next_action)s, %(decided_by)s, %(reason)s,
           %(detail)s::jsonb
    FROM ok
    ON CONFLICT (run_id, stage, attempt) DO NOTHING
    RETURNING id
){_marked(marks).rstrip()}"""


# A new run, its empty context and its first stage's outbox row: one statement (a POST's BEGIN, three INSERTs and
# COMMIT were five round trips before the first stage could be sent — ~1.5 ms of every run's wall time).
_OPEN_RUN_FIELDS = _fields(Run)
_OPEN_SQL = f"""
WITH opened AS (
    INSERT INTO {RUNS} ({", ".join(f'"{f.column}"' for f in _OPEN_RUN_FIELDS)})
    VALUES ({", ".join(f"%(r_{f.attname})s" for f in _OPEN_RUN_FIELDS)})
    RETURNING id
), context AS (
    INSERT INTO {CONTEXTS} (run_id, document, version, updated_at)
    SELECT id, '{{}}'::jsonb, 0, %(now)s FROM opened
), outbox AS (
    INSERT INTO {OUTBOX} (run_id, stage, attempt, queue, created_at, sends, last_error)
    SELECT id, %(stage)s, %(attempt)s, %(queue)s, %(now)s, 0, '' FROM opened
    RETURNING id
)
SELECT opened.id, outbox.id FROM opened, outbox
"""


def open_run(run: Run, first: NextStage) -> int:
    """Store ``run`` (an unsaved instance, its defaults set by the model), an empty context and the outbox row of
    its first stage — what ``Run.objects.create`` and ``engine.entry.run_start`` write, in one statement (its own
    transaction outside the caller's). The context is attached to the run as the ORM would attach it; returns the
    outbox row's id (its sent mark is written later, ``dispatch.send_decided``)."""
    for field in _OPEN_RUN_FIELDS:
        field.pre_save(run, add=True)  # created_at, updated_at: as a save sets them
    now = run.updated_at
    params: dict[str, Any] = {f"r_{f.attname}": f.get_db_prep_save(getattr(run, f.attname), connection)
                              for f in _OPEN_RUN_FIELDS}
    params.update({"now": now, "stage": first.stage, "attempt": first.attempt, "queue": first.queue})
    with _prepared_cursor() as cursor:
        cursor.execute(_OPEN_SQL, params)
        _, outbox_id = cursor.fetchone()
    run._state.adding, run._state.db = False, connection.alias
    context = RunContext(run=run, document={}, version=0, updated_at=now)  # attaches itself as run.context
    context._state.adding, context._state.db = False, connection.alias
    return int(outbox_id)
