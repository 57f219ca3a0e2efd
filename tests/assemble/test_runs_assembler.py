"""The assembler in real runs (real DB, Qdrant, embedding model, tokenizer, offline writer): the flag routes per
specialist, U10 records its path, a finished run's prompt replays to the same bytes, the overflow fails the run
with its counts, and ``ask --show-prompt`` / ``--assembler`` and ``prompt_diff`` show what the writer saw."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from assemble.models import Correction
from assemble.prompt import LAYERED_WRITER_INSTRUCTIONS, legacy_messages
from assemble.selectors import run_writer_prompt
from flags.models import FeatureFlag, FlagOverride
from flags.registry import PROMPT_ASSEMBLER_ENABLED
from llm.models import CostLedgerEntry
from llm.tokenizer import count_tokens
from llm.types import Message
from pipeline.contracts import AssembledPrompt, Intake
from pipeline.document import dump, read
from runs.models import Run, RunContext, StageEvent
from tenancy.models import Specialist
from tests.conftest import post_run
from tests.factories import SpecialistFactory

QUESTION = "Скільки календарних днів триває щорічна основна відпустка?"
KB_OPEN = "<kb_context>\n"


def ask(api: Any, capture: Any, specialist: str = "labour") -> Run:
    with capture(execute=True):
        created = post_run(api, question=QUESTION, specialist=specialist)
    assert created.status_code == 202, created.content
    return Run.objects.get(pk=created.json()["id"])


def u10(run: Run) -> StageEvent:
    event = StageEvent.objects.filter(run=run, stage="U10").order_by("-attempt").first()
    assert event is not None, "the run never reached U10"
    return event


def assembled(run: Run) -> AssembledPrompt:
    prompt = read(RunContext.objects.get(run=run).document, "assembled_prompt", AssembledPrompt)
    assert prompt is not None
    return prompt


def switch_on(specialist: Specialist) -> None:
    flag, _ = FeatureFlag.objects.get_or_create(key=PROMPT_ASSEMBLER_ENABLED)
    FlagOverride.objects.create(flag=flag, specialist=specialist, enabled=True)


def count_in(messages: list[dict[str, str]] | list[Message], needle: str) -> int:
    return sum((m["content"] if isinstance(m, dict) else m.content).count(needle) for m in messages)


@pytest.mark.django_db
def test_by_default_a_run_takes_the_legacy_path_and_u10_says_so(api, specialist, catalog,
                                                                 django_capture_on_commit_callbacks):
    run = ask(api, django_capture_on_commit_callbacks)

    assert run.status == "done" and run.flags[PROMPT_ASSEMBLER_ENABLED] is False
    event = u10(run)
    assert event.detail["assembler"] == "legacy" and event.detail["prompt_matches_u9"] is True
    prompt = assembled(run)
    assert prompt.meta.assembler == "legacy" and prompt.layer_manifest is None
    assert "prompt_assembler_version" not in dump(prompt)["meta"]


@pytest.mark.django_db
def test_an_override_for_one_specialist_routes_only_that_specialists_runs_through_the_layered_path(
        api, specialist, catalog, django_capture_on_commit_callbacks):
    # given the flag switched on for "labour" only, and a second specialist of the same org
    SpecialistFactory(org=specialist.org, slug="other")
    switch_on(specialist)
    # when each asks
    on = ask(api, django_capture_on_commit_callbacks, "labour")
    off = ask(api, django_capture_on_commit_callbacks, "other")
    # then
    assert (on.status, off.status) == ("done", "done")
    assert on.flags[PROMPT_ASSEMBLER_ENABLED] is True and off.flags[PROMPT_ASSEMBLER_ENABLED] is False
    assert u10(on).detail["assembler"] == "layered" and u10(off).detail["assembler"] == "legacy"
    assert u10(on).detail["prompt_assembler_version"] == 1
    layered = assembled(on)
    assert layered.meta.prompt_assembler_version == 1 and layered.layer_manifest
    assert [m.id for m in layered.layer_manifest][:3] == ["red_lines", "directives", "soul"]
    kb = next(m for m in layered.layer_manifest if m.id == "kb")
    assert kb.source_refs == [r.article_ref for r in layered.law_source_refs]
    assert assembled(off).layer_manifest is None


@pytest.mark.django_db
@pytest.mark.parametrize("layered", [False, True], ids=["legacy", "layered"])
def test_a_finished_runs_prompt_replays_from_its_context_and_snippets_to_the_same_bytes(
        layered, api, specialist, catalog, django_capture_on_commit_callbacks):
    if layered:
        switch_on(specialist)
    run = ask(api, django_capture_on_commit_callbacks)
    event = u10(run)
    # when the prompt is rebuilt later from the RunContext and the snippet store
    replayed = run_writer_prompt(run=run)
    again = run_writer_prompt(run=run)
    # then it is what U10 sent, byte for byte, and what U9 measured
    assert replayed.sha256 == again.sha256 == event.detail["prompt_sha256"] == assembled(run).meta.prompt_sha256
    assert replayed.total_tokens == event.detail["prompt_tokens"] == assembled(run).meta.prompt_tokens
    assert replayed.layer_manifest == assembled(run).layer_manifest
    writer = CostLedgerEntry.objects.filter(run=run, role="writer").order_by("attempt").first()
    assert writer is not None and writer.prompt_tokens == replayed.total_tokens  # offline bills exact counts
    if not layered:
        intake = read(RunContext.objects.get(run=run).document, "intake", Intake)
        assert intake is not None
        assert replayed.messages[0] == legacy_messages(profile=intake.specialist, blocks=[],
                                                       question=intake.normalized)[0]


@pytest.mark.django_db
@pytest.mark.parametrize("layered", [False, True], ids=["legacy", "layered"])
def test_kb_soul_and_directives_each_appear_once_in_a_real_runs_prompt(
        layered, api, specialist, catalog, django_capture_on_commit_callbacks):
    if layered:
        switch_on(specialist)
    run = ask(api, django_capture_on_commit_callbacks)
    messages = run_writer_prompt(run=run).messages
    refs = [r.article_ref for r in assembled(run).law_source_refs]
    assert refs
    assert count_in(messages, KB_OPEN) == 1
    for ref in refs:
        assert count_in(messages, f'<source ref="{ref}"') == 1
    assert count_in(messages, specialist.soul) == 1
    for directive in specialist.directives:
        assert count_in(messages, directive) == 1
    assert [m.role for m in messages] == (["system", "user"] if layered else ["system", "user", "user"])


@pytest.mark.django_db
def test_the_offline_answer_stays_cited_on_the_layered_path(api, specialist, catalog,
                                                            django_capture_on_commit_callbacks):
    switch_on(specialist)
    run = ask(api, django_capture_on_commit_callbacks)
    draft = RunContext.objects.get(run=run).document["draft"]
    assert draft["citations"], draft["text"]


@pytest.mark.django_db
def test_when_never_truncate_layers_exceed_the_budget_the_run_fails_with_the_counts(
        api, specialist, catalog, settings, django_capture_on_commit_callbacks):
    # given a prompt envelope of 60 tokens and red lines longer than that
    settings.U9_PROFILE_TOKENS = {settings.U9_BUDGET_PROFILE: 60}
    specialist.red_lines = "Ніколи не вигадуй норм і не посилайся на статті, яких немає серед джерел. " * 4
    specialist.save()
    switch_on(specialist)
    # when
    run = ask(api, django_capture_on_commit_callbacks)
    # then nothing was sent to the writer, and the reason says why
    assert run.status == "failed"
    assert "PromptBudgetExceeded" in run.error and "prompt budget is 60" in run.error and "red_lines=" in run.error
    assert not StageEvent.objects.filter(run=run, stage="U10").exists()
    assert not CostLedgerEntry.objects.filter(run=run, role="writer").exists()


@pytest.mark.django_db
def test_corrections_enter_the_layered_prompt_and_a_run_replays_the_ones_it_used(
        api, specialist, catalog, django_capture_on_commit_callbacks):
    # given an operator's correction for this specialist
    fix = Correction.objects.create(specialist=specialist, question="Скільки триває відпустка?",
                                    bad_answer="Тиждень.", fixed_answer="Не менш як 24 календарних дні.")
    switch_on(specialist)
    run = ask(api, django_capture_on_commit_callbacks)
    prompt = assembled(run)
    layer = next(m for m in prompt.layer_manifest or [] if m.id == "correction")
    assert layer.source_refs == [f"correction:{fix.pk}"] and prompt.meta.correction_ids == [fix.pk]
    # when the operator retires it after the run
    fix.active = False
    fix.save()
    # then the run still replays to the bytes it sent
    assert run_writer_prompt(run=run).sha256 == u10(run).detail["prompt_sha256"]


# ``ask`` runs the pipeline as the command runs (embedded mode: U1 starts when run_create commits), so these
# tests commit for real instead of capturing on_commit callbacks until after the command has returned.
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("switch", ["on", "off"])
def test_ask_json_show_prompt_shows_what_the_writer_saw_and_assembler_overrides_the_flag(
        switch, specialist, catalog):
    out = StringIO()
    call_command("ask", QUESTION, "--specialist", "labour", "--json", "--show-prompt", "--assembler", switch,
                 stdout=out)
    view = json.loads(out.getvalue())
    prompt = view["prompt"]
    assert set(prompt) == {"messages", "layer_manifest", "assembler", "total_tokens"}
    assert prompt["assembler"] == ("layered" if switch == "on" else "legacy")
    assert (prompt["layer_manifest"] is None) == (switch == "off")
    assert count_in(prompt["messages"], KB_OPEN) == 1 and count_in(prompt["messages"], specialist.soul) == 1
    assert all(set(m) == {"role", "content"} for m in prompt["messages"])
    run = Run.objects.get(pk=view["id"])
    assert run.flag_overrides == {PROMPT_ASSEMBLER_ENABLED: switch == "on"}
    assert run.flags[PROMPT_ASSEMBLER_ENABLED] is (switch == "on")
    assert prompt["total_tokens"] == u10(run).detail["prompt_tokens"]


@pytest.mark.django_db(transaction=True)
def test_ask_show_prompt_under_a_tiny_budget_keeps_the_red_lines_and_the_soul_once(specialist, catalog, settings):
    # 300 tokens with the writer's rules as they were (112 tokens), plus what they have grown by since
    tiny = 300 + count_tokens(LAYERED_WRITER_INSTRUCTIONS, "gpt-4o-mini") - 112
    settings.U9_PROFILE_TOKENS = {settings.U9_BUDGET_PROFILE: tiny}
    out = StringIO()
    call_command("ask", QUESTION, "--specialist", "labour", "--json", "--show-prompt", "--assembler", "on",
                 stdout=out)
    prompt = json.loads(out.getvalue())["prompt"]
    system = prompt["messages"][0]["content"]
    assert specialist.red_lines in system and system.count(specialist.soul) == 1
    manifest = {m["id"]: m for m in prompt["layer_manifest"]}
    assert not manifest["red_lines"]["truncated"] and not manifest["soul"]["truncated"]
    assert sum(m["tokenCount"] for m in prompt["layer_manifest"]) <= tiny
    # the kb is there once: U9 sized the evidence to the room the never-truncated parts left it
    assert manifest["kb"]["included"]
    assert count_in(prompt["messages"], KB_OPEN) == 1


@pytest.mark.django_db
def test_prompt_diff_shows_both_ways_and_both_manifests_without_changing_the_run(
        api, specialist, catalog, django_capture_on_commit_callbacks):
    run = ask(api, django_capture_on_commit_callbacks)
    ctx = RunContext.objects.get(run=run)
    before = (ctx.version, ctx.document, StageEvent.objects.filter(run=run).count(),
              CostLedgerEntry.objects.filter(run=run).count(), run.status)

    text, as_json = StringIO(), StringIO()
    call_command("prompt_diff", str(run.pk), stdout=text)
    call_command("prompt_diff", str(run.pk), "--json", stdout=as_json)

    out = text.getvalue()
    assert "--- flag OFF (legacy)" in out and "+++ flag ON (layered)" in out
    assert "-=== user ===" in out and "Layer manifest, flag ON:" in out and " kb " in out
    body = json.loads(as_json.getvalue())
    assert body["took"] == "legacy" and body["legacy"]["layer_manifest"] is None
    assert body["layered"]["layer_manifest"][0]["id"] == "red_lines"
    assert body["legacy"]["messages"] == run_writer_prompt(run=run).as_json()["messages"]
    ctx.refresh_from_db()
    run.refresh_from_db()
    assert (ctx.version, ctx.document, StageEvent.objects.filter(run=run).count(),
            CostLedgerEntry.objects.filter(run=run).count(), run.status) == before


@pytest.mark.django_db
def test_prompt_diff_refuses_an_unknown_run_with_a_sentence():
    with pytest.raises(CommandError, match="no run 'nope'"):
        call_command("prompt_diff", "nope")
    with pytest.raises(CommandError, match="no run '00000000-0000-0000-0000-000000000000'"):
        call_command("prompt_diff", "00000000-0000-0000-0000-000000000000")


@pytest.mark.django_db
def test_the_admin_shows_the_shadow_compare_read_only(admin_client, api, specialist, catalog,
                                                     django_capture_on_commit_callbacks):
    run = ask(api, django_capture_on_commit_callbacks)
    page = admin_client.get(reverse("admin:console_runpromptdiff_change", args=[run.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "flag OFF (legacy)" in html and "flag ON (layered)" in html and "red_lines" in html
    assert admin_client.post(reverse("admin:console_runpromptdiff_change", args=[run.pk]), {}).status_code == 403
