"""Retrieval evaluation: run the real U1–U4 stages over a JSONL of questions with gold articles and score the
ranking (recall@k, MRR) at the article or the act level. Used by ``manage.py eval_retrieval`` and the bench."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pipeline.contracts import RawHits, SpecialistProfile
from pipeline.lexicon import ActLexicon
from pipeline.stages.intake import intake
from pipeline.stages.planning import plan_search
from pipeline.stages.profiling import profile_query
from pipeline.stages.retrieval import SearchPort, retrieve

Level = Literal["article", "act"]
_SPECIALIST = SpecialistProfile(slug="eval")


class EvalInputError(Exception):
    """The evaluation file is unusable: the message is a sentence for the operator."""


@dataclass(frozen=True)
class EvalCase:
    question: str
    gold: tuple[tuple[str, str], ...]  # (act nreg case-folded, article)


@dataclass(frozen=True)
class CaseResult:
    case: EvalCase
    ranked: tuple[str, ...]  # article keys "nreg#article" or act keys, best first
    rank: int | None  # 1-based rank of the first gold item within k, None when missed
    found: int  # gold items within k


@dataclass
class EvalReport:
    k: int
    level: Level
    results: list[CaseResult] = field(default_factory=list)
    skipped: int = 0

    @property
    def n(self) -> int:
        return len(self.results)

    @property
    def recall_at_k(self) -> float:
        if not self.results:
            return 0.0
        return sum(r.found / len(self.gold_keys(r.case)) for r in self.results) / self.n

    @property
    def mrr(self) -> float:
        return sum(1.0 / r.rank for r in self.results if r.rank) / self.n if self.results else 0.0

    def gold_keys(self, case: EvalCase) -> list[str]:
        keys = [nreg if self.level == "act" else f"{nreg}#{art}" for nreg, art in case.gold]
        return list(dict.fromkeys(keys))

    def misses(self) -> list[CaseResult]:
        return [r for r in self.results if r.found < len(self.gold_keys(r.case))]

    def summary(self) -> dict[str, Any]:
        return {"n": self.n, "recall_at_k": round(self.recall_at_k, 4), "mrr": round(self.mrr, 4), "k": self.k,
                "level": self.level}


def read_cases(path: Path, *, sample: int | None = None, seed: int = 0) -> tuple[list[EvalCase], int]:
    """Cases with a question (``question`` or ``query``) and a non-empty ``gold``; others are counted as skipped."""
    if not path.exists():
        raise EvalInputError(f"file not found: {path}")
    cases: list[EvalCase] = []
    skipped = 0
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvalInputError(f"{path}:{lineno}: not JSON ({exc.msg})") from exc
            question = rec.get("question") or rec.get("query") if isinstance(rec, dict) else None
            gold = rec.get("gold") if isinstance(rec, dict) else None
            if not question or not gold:
                skipped += 1
                continue
            try:
                pairs = tuple((str(g["act_nreg"]).lower(), str(g["article"])) for g in gold)
            except (KeyError, TypeError) as exc:
                raise EvalInputError(f"{path}:{lineno}: gold items need act_nreg and article") from exc
            cases.append(EvalCase(str(question), pairs))
    if not cases:
        raise EvalInputError(f"{path}: no line has a question and a gold list")
    if sample is not None and sample < len(cases):
        cases = random.Random(seed).sample(cases, sample)
    return cases, skipped


def ranked_keys(hits: RawHits, level: Level) -> list[str]:
    keys = [h.act_nreg.lower() if level == "act" else f"{h.act_nreg.lower()}#{h.article}" for h in hits.hits]
    return list(dict.fromkeys(keys))


def run_case(case: EvalCase, *, lexicon: ActLexicon, port: SearchPort, k: int, top_k: int) -> RawHits:
    section = intake(question=case.question, specialist=_SPECIALIST, max_chars=100_000, now=datetime.now(UTC))
    profile = profile_query(section, lexicon)
    plan = plan_search(question=section.normalized, profile=profile, top_k=max(top_k, k))
    hits, _ = retrieve(plan, port, attempt=1)
    return hits


def evaluate(cases: list[EvalCase], *, lexicon: ActLexicon, port: SearchPort, k: int, level: Level,
             top_k: int, on_case: Callable[[CaseResult], None] | None = None) -> EvalReport:
    report = EvalReport(k=k, level=level)
    for case in cases:
        ranked = ranked_keys(run_case(case, lexicon=lexicon, port=port, k=k, top_k=top_k), level)[:k]
        gold = report.gold_keys(case)
        ranks = [ranked.index(g) + 1 for g in gold if g in ranked]
        result = CaseResult(case, tuple(ranked), min(ranks) if ranks else None, len(ranks))
        report.results.append(result)
        if on_case:
            on_case(result)
    return report


def iter_miss_lines(report: EvalReport, limit: int) -> Iterator[str]:
    for r in report.misses()[:limit]:
        gold = ", ".join(report.gold_keys(r.case))
        yield f"MISS {r.case.question!r} gold=[{gold}] top=[{', '.join(r.ranked[:5])}]"
