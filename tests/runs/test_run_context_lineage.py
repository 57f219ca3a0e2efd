"""Real RunContext documents (pipeline/context.py): a run that asked the user, resumed and was re-run from every
stage — each stored document parses into ``RunDocument`` and dumps back unchanged, and each re-run starts with
exactly the sections the stages before it own."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from orch.policy import STAGES
from pipeline.context import LINEAGE_KEYS, MASKED, SECTION_OWNER, RunDocument
from runs.models import Run, RunContext
from runs.services import run_rerun_from
from tests.conftest import post_run


def finished_after_clarification(api: APIClient, capture: Any) -> Run:
    with capture(execute=True):
        created = post_run(api, question="Що передбачає стаття 4 процесуального кодексу?", specialist="labour")
    run_id = created.json()["id"]
    with capture(execute=True):
        answered = api.post(f"/api/v1/runs/{run_id}/clarification", {"option": "1618-15"}, format="json")
    assert answered.status_code == 202, answered.content
    return Run.objects.get(pk=run_id)


@pytest.mark.django_db
def test_a_clarified_run_and_its_reruns_keep_lossless_documents_and_drop_what_the_rerun_stages_own(
        api, specialist, catalog, django_capture_on_commit_callbacks):
    # given a run that waited for the user's answer, resumed from U7 and delivered
    old = finished_after_clarification(api, django_capture_on_commit_callbacks)
    assert old.status == Run.Status.DONE
    before = RunContext.objects.get(run=old).document
    assert {"clarification", "resume", "raw_hits", "answer"} <= set(before)
    for stage in STAGES:
        # when it is re-run from the stage (the new run is not executed here)
        with django_capture_on_commit_callbacks(execute=False):
            new = run_rerun_from(run=old, stage=stage)
        document = RunContext.objects.get(run=new).document
        # then the new run keeps what the earlier stages own, and nothing the stage or a later one owns
        later = STAGES[STAGES.index(stage):]
        kept = {name for name in before if name in SECTION_OWNER and SECTION_OWNER[name].stage not in later}
        assert set(document) == kept | {MASKED, "rerun_of"}, stage
        assert all(document[name] == before[name] for name in kept)
        assert document["rerun_of"] == {"run": str(old.pk), "from_stage": stage}
    # and every document stored on the way reads and writes back unchanged
    for ctx in RunContext.objects.filter(run__org=old.org):
        assert RunDocument.parse(ctx.document).dump() == ctx.document
    assert RunContext.objects.get(run=old).document.keys() - before.keys() == set(LINEAGE_KEYS[:1])
