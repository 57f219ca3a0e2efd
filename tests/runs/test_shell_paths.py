"""Shell paths no test walked before (issue 13, item 10): the canary's model call from the shell (cheap or premium,
``decided_by`` on the stage event, the rule kept when the provider fails), the flag resolver's fail-safe OFF
(seed 004 Task 1), and a flag flipped mid-run not changing that run (snapshotted at U1)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User

from engine.shell import execute_stage
from flags.models import FeatureFlag
from flags.registry import PROMPT_ASSEMBLER_ENABLED
from flags.selectors import flag_resolve, flags_snapshot
from flags.services import flag_override_set, flags_sync_registry
from llm.models import CostLedgerEntry
from pipeline import contracts as c
from pipeline.document import dump
from runs.models import Run, RunContext, StageEvent
from runs.services import run_create
from tenancy.models import Specialist
from tests.support.openai_server import FakeOpenAIServer, openai_gateway

KZPP = c.ActCue(nreg="322-08", title="Кодекс законів про працю України", label="КЗпП", matched="КЗпП",
                how="abbreviation", indexed=True)
CK = c.ActCue(nreg="435-15", title="Цивільний кодекс України", label="ЦК", matched="ЦК", how="abbreviation",
              indexed=True)


def hit(nreg: str, label: str, article: str, channel: str, score: float) -> c.Hit:
    return c.Hit(chunk_key=f"{nreg}#{article}#0", act_nreg=nreg, act_title=label, act_label=label, article=article,
                 article_ref=f"{label} ст. {article}", r2_key=f"k/{nreg}/{article}", ordinal=0, score=score,
                 channel=channel, step=0)


def u5_ready(acts: list[c.ActCue], complexity: str) -> dict[str, Any]:
    """A document U5 gates as "partial": hits of every named act, but the two signals never agree — the rules
    forward to U7 and leave U6 as the alternative a model may choose."""
    profile = c.QueryProfile(mode="law", law_only=True, act_hints=acts, goals=["Чи можна звільнити за прогул?"],
                             keywords=["можна", "звільнити", "прогул"],
                             complexity=complexity)
    hits = c.RawHits(hits=[hit("322-08", "КЗпП", "40", "lexical", 0.03), hit("435-15", "ЦК", "16", "dense", 0.02)])
    return {"query_profile": dump(profile), "raw_hits": dump(hits)}


def run_at_u5(specialist: Specialist, document: dict[str, Any]) -> Run:
    run = run_create(org=specialist.org, specialist=specialist, question="Чи можна звільнити за прогул?")
    RunContext.objects.filter(run=run).update(document=document)
    return run


@pytest.fixture
def orch_server(settings: Any) -> Iterator[FakeOpenAIServer]:
    """The ORCH models behind a loopback OpenAI-protocol server (the real openai SDK talks to it)."""
    with openai_gateway(settings, max_retries=0) as fake:
        yield fake


@pytest.mark.django_db
@pytest.mark.parametrize(("acts", "complexity", "decided_by", "model_setting"), [
    pytest.param([KZPP, CK], "simple", "premium", "ORCH_PREMIUM_MODEL", id="two-acts-complex-premium"),
    pytest.param([], "moderate", "cheap", "ORCH_CHEAP_MODEL", id="no-cues-moderate-cheap"),
])
def test_a_hard_branch_asks_the_orch_model_and_the_event_records_who_decided(
        specialist, orch_server, settings, acts, complexity, decided_by, model_setting):
    # given a run whose U5 leaves a real choice, and a model that picks the alternative
    orch_server.script([{"reply": "RUN_U6"}])
    run = run_at_u5(specialist, u5_ready(acts, complexity))
    # when the shell runs U5
    execute_stage(str(run.pk), "U5", 1)
    # then the model's choice stands, the event says which model made it, and the call is in the ledger
    event = StageEvent.objects.get(run=run, stage="U5")
    assert (event.next_action, event.decided_by) == ("RUN_U6", decided_by)
    assert "model chose RUN_U6 over RUN_U7" in event.reason
    (call,) = CostLedgerEntry.objects.filter(run=run, role="orch")
    assert (call.stage, call.model, call.status) == ("U5", getattr(settings, model_setting), "ok")
    assert "<orch_options>RUN_U7 | RUN_U6</orch_options>" in orch_server.requests[0]["messages"][1]["content"]


@pytest.mark.django_db
def test_a_provider_error_keeps_the_rules_choice(specialist, orch_server):
    # given the ORCH model's server refuses the request
    orch_server.script([{"status": 400}])
    run = run_at_u5(specialist, u5_ready([KZPP, CK], "simple"))
    # when
    execute_stage(str(run.pk), "U5", 1)
    # then the rule decided, the run goes on, and the failed call is still in the ledger
    event = StageEvent.objects.get(run=run, stage="U5")
    assert (event.outcome, event.next_action, event.decided_by) == ("ok", "RUN_U7", "rule")
    assert CostLedgerEntry.objects.get(run=run, role="orch").status == "error"
    assert Run.objects.get(pk=run.pk).status == "running"


@pytest.mark.django_db
def test_an_obvious_branch_never_calls_a_model(specialist, orch_server):
    run = run_at_u5(specialist, u5_ready([KZPP], "simple"))  # one act: obvious (seed 001)
    execute_stage(str(run.pk), "U5", 1)
    assert StageEvent.objects.get(run=run, stage="U5").decided_by == "rule"
    assert not CostLedgerEntry.objects.filter(run=run).exists() and orch_server.requests == []


@pytest.mark.django_db
def test_the_flag_resolver_answers_off_when_it_cannot_resolve(specialist):
    # given the flag is ON for everyone by default
    flags_sync_registry()
    FeatureFlag.objects.filter(key=PROMPT_ASSEMBLER_ENABLED).update(default_enabled=True)
    assert flag_resolve(key=PROMPT_ASSEMBLER_ENABLED, specialist=specialist) is True
    # when the lookup itself fails (a specialist that was never saved cannot be filtered on)
    broken = Specialist(org=specialist.org, slug="unsaved")
    # then the answer is OFF, not the default (seed 004 Task 1: "false on resolver throw")
    assert flag_resolve(key=PROMPT_ASSEMBLER_ENABLED, specialist=broken) is False
    assert flags_snapshot(specialist=broken) == {PROMPT_ASSEMBLER_ENABLED: False}  # what a run's U1 records


@pytest.mark.django_db
def test_a_flag_flipped_mid_run_does_not_change_that_run(specialist, catalog, django_capture_on_commit_callbacks):
    # given a run past U1 with the assembler OFF
    flag = next(f for f in flags_sync_registry() if f.key == PROMPT_ASSEMBLER_ENABLED)
    run = run_create(org=specialist.org, specialist=specialist, question="Скільки триває щорічна відпустка?")
    execute_stage(str(run.pk), "U1", 1)
    assert Run.objects.get(pk=run.pk).flags[PROMPT_ASSEMBLER_ENABLED] is False
    # when an operator turns it ON for the specialist while the run is in flight
    operator = User.objects.create_superuser("op", "op@example.com", "pw-12345678")
    flag_override_set(flag=flag, enabled=True, actor=operator, specialist=specialist)
    assert flag_resolve(key=PROMPT_ASSEMBLER_ENABLED, specialist=specialist) is True
    with django_capture_on_commit_callbacks(execute=True):
        execute_stage(str(run.pk), "U2", 1)
    # then the run finished the way it started: the legacy prompt, at U9 and at U10
    run.refresh_from_db()
    assert run.status == "done" and run.flags[PROMPT_ASSEMBLER_ENABLED] is False
    assert StageEvent.objects.get(run=run, stage="U9").detail["assembler"] == "legacy"
    assert StageEvent.objects.get(run=run, stage="U10").detail["assembler"] == "legacy"
    # …while a run started now takes the layered path
    with django_capture_on_commit_callbacks(execute=True):
        later = run_create(org=specialist.org, specialist=specialist, question="Скільки триває щорічна відпустка?")
    assert StageEvent.objects.get(run=later, stage="U9").detail["assembler"] == "layered"


# --- ContextConflict: the document moved while the stage computed -------------------------------------------
def u12_ready() -> dict[str, Any]:
    """A document U12 can deliver from; ORCH ends the run after it, so nothing else is enqueued."""
    draft = c.Draft(text="Відпустка триває 24 дні (КЗпП ст. 75).", provider="offline", model="m", attempt=1,
                    citations=[c.Citation(article_ref="КЗпП ст. 75", act_nreg="322-08", article="75")])
    verified = c.VerifyResult(verdict="complete",
                              citations=[c.CitationCheck(article_ref="КЗпП ст. 75", status="supported")])
    return {"draft": dump(draft), "verify_result": dump(verified),
            "evidence_assembly": dump(c.EvidenceAssembly(items=[], support_level="strong"))}


def racing_writer(run: Run, note: dict[str, Any]) -> tuple[Any, Any]:
    """A second writer (a real connection in its own thread): it locks the run's document, changes it, and commits
    only once the stage under test is blocked on that lock — after the stage read its snapshot."""
    import threading

    from django.db import connection, transaction

    ready, done = threading.Event(), threading.Event()

    def write() -> None:
        try:
            with transaction.atomic():
                ctx = RunContext.objects.select_for_update().get(run=run)
                ctx.document = {**ctx.document, "resume": note}
                ctx.version += 1
                ctx.save(update_fields=["document", "version"])
                ready.set()
                with connection.cursor() as cur:  # wait until a backend of this database waits for our lock
                    for _ in range(200):
                        cur.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                    "AND wait_event_type = 'Lock'")
                        if cur.fetchone()[0]:
                            break
                        threading.Event().wait(0.05)
        finally:
            connection.close()
            done.set()

    threading.Thread(target=write, daemon=True).start()
    assert ready.wait(10)
    return ready, done


def requires_postgres() -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("row locks between two connections: PostgreSQL (make test runs the suite there first)")


@pytest.mark.django_db(transaction=True)
def test_a_document_moved_during_a_stage_is_recomputed_never_overwritten(specialist, settings):
    requires_postgres()
    # given a run at U12, and another writer changing its document while U12 computes
    run = Run.objects.create(org=specialist.org, specialist=specialist, question="Скільки триває відпустка?",
                             status="running")
    RunContext.objects.create(run=run, document=u12_ready(), version=3)
    _, done = racing_writer(run, {"action": "RUN_U7", "reason": "the other writer"})
    # when
    execute_stage(str(run.pk), "U12", 1)
    assert done.wait(10)
    # then the stage ran again on the new document: both writes are there, in order, and the run is done
    ctx = RunContext.objects.get(run=run)
    assert ctx.version == 5
    assert ctx.document["resume"]["reason"] == "the other writer" and ctx.document["answer"]["citations"]
    event = StageEvent.objects.get(run=run, stage="U12")
    assert (event.outcome, event.detail["context_conflicts"]) == ("ok", 1)
    assert Run.objects.get(pk=run.pk).status == "done"


@pytest.mark.django_db(transaction=True)
def test_a_conflict_past_its_bound_fails_the_run_with_a_clear_error(specialist, settings):
    requires_postgres()
    settings.STAGE_CONFLICT_RETRY_MAX = 0
    run = Run.objects.create(org=specialist.org, specialist=specialist, question="Скільки триває відпустка?",
                             status="running")
    RunContext.objects.create(run=run, document=u12_ready(), version=3)
    _, done = racing_writer(run, {"action": "RUN_U7", "reason": "the other writer"})
    execute_stage(str(run.pk), "U12", 1)
    assert done.wait(10)
    run.refresh_from_db()
    assert run.status == "failed" and "ContextConflict: RunContext moved from v3 to v4 during U12" in run.error
    ctx = RunContext.objects.get(run=run)
    assert ctx.version == 4 and "answer" not in ctx.document  # the other write stands, nothing overwrote it
    assert StageEvent.objects.get(run=run, stage="U12").outcome == "error"
