"""The seeded U6→U4 rerun on a real U4→U5→U6→U4→U5 cycle (issue 13, item 2; seeds 001/002): the rerun searches
within the act DocList resolved — the question and the named article in it — merges hits and trace, moves the
request to ``applied`` and pays each search once."""

from __future__ import annotations

import pytest

from knowledge.models import Act
from runs.models import RunContext, StageEvent
from tests.conftest import post_run

QUESTION = "Що передбачає стаття 4 процесуального кодексу?"
CPK = "1618-15"


@pytest.mark.django_db
def test_a_rerun_searches_within_the_act_doclist_resolved_and_pays_each_search_once(
        api, specialist, catalog, django_capture_on_commit_callbacks):
    # given a catalog in which "процесуального кодексу" can only mean the Civil Procedure Code: the lexicon
    # cannot bind the phrase (no act's full name), DocList's broad match resolves it to one indexed act
    Act.objects.filter(nreg__in=["1798-12", "4651-17"]).delete()
    # when
    with django_capture_on_commit_callbacks(execute=True):
        created = post_run(api, question=QUESTION, specialist="labour")
    run_id = created.json()["id"]
    events = list(StageEvent.objects.filter(run_id=run_id).order_by("step"))
    walk = [e.stage for e in events]
    # then the walk is the recovery cycle: U4 → U5 → U6 → U4 → U5 → …
    first = walk.index("U4")
    assert walk[first:first + 5] == ["U4", "U5", "U6", "U4", "U5"], walk
    u6 = events[first + 2]
    assert u6.detail["doclist"] == ["ACT_FOUND_AND_INDEXED"] and u6.next_action == "RUN_U4"
    initial, rerun = (e.detail["searches"] for e in events if e.stage == "U4")
    # the rerun looks in the resolved act: the article by number and the question itself
    assert ["exact_article", "стаття 4", [CPK]] in rerun
    assert ["hybrid", QUESTION, [CPK]] in rerun
    # …and nothing the first pass already paid for (the unfiltered question) is searched again
    assert not [s for s in rerun if s in initial], rerun
    doc = RunContext.objects.get(run_id=run_id).document
    trace = doc["retrieval_trace"]
    assert [[s["kind"], s["query"], s["act_filter"]] for s in trace["steps"]] == initial + rerun
    assert [s["step"] for s in trace["steps"]] == list(range(len(initial) + len(rerun)))
    assert trace["seeded"] is True
    u4_rerun = [e for e in events if e.stage == "U4"][1]
    assert u4_rerun.detail["seeded"] is True
    # the request was applied by that U4 (U6 then found its bound spent and forwarded)
    assert doc["retrieval_retry_request"]["state"] in ("applied", "exhausted")
    exact = [h for h in doc["raw_hits"]["hits"] if h["channel"] == "exact" and h["act_nreg"] == CPK]
    assert exact and {h["article"] for h in exact} == {"4"}
    assert api.get(f"/api/v1/runs/{run_id}").json()["status"] == "done"
