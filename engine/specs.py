"""One table of what each stage is to the engine: the sections it writes, the queue it runs on, its time limits and
how often it may be delivered without finishing. The task declarations, dispatch, the reaper and the re-run read
this table; nothing else keeps a per-stage registry.

Limits come from settings when the table is built (at import): a worker restarted with new settings uses them."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from orch.policy import STAGES
from pipeline import context

DEFAULT_QUEUE = "stages"
# U4/U6/U7 touch the search engine and the embedder: workers that keep both loaded (several may run: the shards are
# read-only, README "Users' documents in the embedded engine").
RETRIEVAL_QUEUE = "retrieval"
ALL_QUEUES = (DEFAULT_QUEUE, RETRIEVAL_QUEUE, "assemble", "llm")
TASK_PREFIX = "engine.stage."


@dataclass(frozen=True)
class StageSpec:
    stage: str
    sections: tuple[str, ...]  # what the stage owns in the RunContext document (pipeline/context.py)
    queue: str
    soft_limit_s: int  # SoftTimeLimitExceeded inside the stage: the stage fails with that reason
    hard_limit_s: int  # the pool kills the process; the reaper re-sends the attempt after this plus a grace
    max_redeliveries: int  # deliveries of one attempt beyond the first before the run fails
    calls_model: bool  # always reaches the model gateway: claimed before it computes (engine/held.py)

    @property
    def task_name(self) -> str:
        return TASK_PREFIX + self.stage


_MODEL_STAGES = ("U10",)  # the writer; other stages reach a model only sometimes and say so when they do
_QUEUES = {"U4": RETRIEVAL_QUEUE, "U6": RETRIEVAL_QUEUE, "U7": RETRIEVAL_QUEUE,
           "U9": "assemble", "U10": "llm", "U11": "llm"}


def _spec(stage: str) -> StageSpec:
    return StageSpec(stage=stage, sections=context.sections_owned_by(stage), queue=_QUEUES.get(stage, DEFAULT_QUEUE),
                     soft_limit_s=settings.STAGE_SOFT_TIME_LIMIT_S, hard_limit_s=settings.STAGE_TIME_LIMIT_S,
                     max_redeliveries=settings.STAGE_MAX_REDELIVERIES, calls_model=stage in _MODEL_STAGES)


STAGE_SPECS: dict[str, StageSpec] = {stage: _spec(stage) for stage in STAGES}


def spec(stage: str) -> StageSpec:
    return STAGE_SPECS[stage]


def queue_for(stage: str) -> str:
    return STAGE_SPECS[stage].queue

