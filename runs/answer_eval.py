"""End-to-end answer evaluation: each question runs the whole pipeline (U1–U12) as a user's run would, and the
delivered answer is scored — does it cite a gold article, is the first citation gold, and does the support label
mean something (``strong`` precision: of the answers labelled strong, the share that cite a gold article)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from knowledge.eval import EvalCase
from runs.models import Run
from runs.selectors import run_view
from runs.services import run_create
from tenancy.models import Org, Specialist


@dataclass(frozen=True)
class AnswerResult:
    case: EvalCase
    status: str
    support: str | None
    citations: tuple[str, ...]  # "nreg#article" of the delivered citations, in order
    cites_gold: bool
    first_is_gold: bool


@dataclass
class AnswerReport:
    results: list[AnswerResult] = field(default_factory=list)

    def _share(self, pred: Callable[[AnswerResult], bool], among: list[AnswerResult] | None = None) -> float:
        rows = self.results if among is None else among
        return round(sum(1 for r in rows if pred(r)) / len(rows), 4) if rows else 0.0

    def summary(self) -> dict[str, Any]:
        strong = [r for r in self.results if r.support == "strong"]
        return {
            "n": len(self.results),
            "cites_gold": self._share(lambda r: r.cites_gold),
            "first_citation_gold": self._share(lambda r: r.first_is_gold),
            "done": self._share(lambda r: r.status == Run.Status.DONE),
            "support": {level: sum(1 for r in self.results if r.support == level)
                        for level in ("strong", "partial", "weak", "none")},
            "strong_precision": self._share(lambda r: r.cites_gold, strong),
        }

    def misses(self) -> list[AnswerResult]:
        return [r for r in self.results if not r.cites_gold]


def answer_case(case: EvalCase, *, org: Org, specialist: Specialist) -> AnswerResult:
    """Runs in the configured mode; the command requires eager execution, so the run has ended on return."""
    run = run_create(org=org, specialist=specialist, question=case.question)
    run = Run.objects.select_related("specialist", "context").get(pk=run.pk)
    view = run_view(run=run)
    cited = tuple(f"{c['act_nreg'].lower()}#{c['article']}" for c in (view["answer"] or {}).get("citations", []))
    gold = {f"{n}#{a}" for n, a in case.gold}
    return AnswerResult(case=case, status=run.status, support=view["support_level"], citations=cited,
                        cites_gold=any(c in gold for c in cited), first_is_gold=bool(cited) and cited[0] in gold)


def evaluate_answers(cases: list[EvalCase], *, org: Org, specialist: Specialist,
                     on_case: Callable[[AnswerResult], None] | None = None) -> AnswerReport:
    report = AnswerReport()
    for case in cases:
        result = answer_case(case, org=org, specialist=specialist)
        report.results.append(result)
        if on_case:
            on_case(result)
    return report
