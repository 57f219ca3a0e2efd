"""The run list's filters in the console: retries, clarifications, coverage gaps."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import HttpRequest

from runs.models import Run, StageEvent


class YesNoFilter(admin.SimpleListFilter):
    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "yes"), ("no", "no")]

    def condition(self) -> Q:
        raise NotImplementedError

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "yes":
            return queryset.filter(self.condition())
        if self.value() == "no":
            return queryset.exclude(self.condition())
        return queryset


class HadRetriesFilter(YesNoFilter):
    """A stage ran more than once: a retrieval rerun (U6→U4) or a write retry (U11→U10)."""

    title = "had retries"
    parameter_name = "retries"

    def condition(self) -> Q:
        return Q(Exists(StageEvent.objects.filter(run=OuterRef("pk"), attempt__gt=1)))


class AwaitedClarificationFilter(YesNoFilter):
    title = "awaited clarification"
    parameter_name = "clarification"

    def condition(self) -> Q:
        asked = StageEvent.objects.filter(run=OuterRef("pk"), next_action="ASK_CLARIFICATION")
        return (Q(status=Run.Status.AWAITING_CLARIFICATION) | Q(Exists(asked))
                | Q(context__document__has_key="clarification"))


class CoverageGapFilter(YesNoFilter):
    """The law asked about is not in the index (DocList said so): the answer had to say it honestly."""

    title = "coverage gap"
    parameter_name = "gap"

    def condition(self) -> Q:
        return Q(context__document__has_key="coverage_gap")
