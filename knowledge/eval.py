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

from knowledge.ingest.jsonl import IngestError, numbered_lines
from legaltext.lexicon import ActLexicon
from pipeline.contracts import QueryProfile, RawHits, RetrievalTrace, SpecialistProfile
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
    act_hit: bool = False  # a gold act among the acts of the top ACT_TOP_N results
    groups: tuple[str, ...] = ()  # the gold's groups (GROUPS), for per-group results


ACT_TOP_N = 5  # "is the right act among the acts of the first five articles": what a reader skims
HIT_KS = (1, 3, 5, 10)
# Per-group results: the Constitution has no headings, codes compete with special laws for the same question.
GROUPS = ("headed", "unheaded", "constitution", "code", "law")
GroupOf = Callable[[EvalCase], tuple[str, ...]]


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

    def hit_at(self, k: int) -> float:
        """Any gold item within the first k: what a user feels (recall@k counts every gold item)."""
        return sum(1 for r in self.results if r.rank and r.rank <= k) / self.n if self.results else 0.0

    @property
    def act_hit(self) -> float:
        return sum(1 for r in self.results if r.act_hit) / self.n if self.results else 0.0

    def _metrics(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n": self.n, "recall_at_k": round(self.recall_at_k, 4), "mrr": round(self.mrr, 4)}
        out.update({f"hit_at_{k}": round(self.hit_at(k), 4) for k in HIT_KS if k <= self.k})
        out[f"act_hit_at_{ACT_TOP_N}"] = round(self.act_hit, 4)
        return out

    def subset(self, keep: Callable[[CaseResult], bool]) -> EvalReport:
        return EvalReport(k=self.k, level=self.level, results=[r for r in self.results if keep(r)])

    def by_act(self) -> dict[str, dict[str, Any]]:
        acts = sorted({r.case.gold[0][0] for r in self.results})
        return {a: self.subset(_of_act(a))._metrics() for a in acts}

    def by_group(self) -> dict[str, dict[str, Any]]:
        out = {g: self.subset(_in_group(g)) for g in GROUPS}
        return {g: rep._metrics() for g, rep in out.items() if rep.n}

    def summary(self) -> dict[str, Any]:
        return {**self._metrics(), "k": self.k, "level": self.level}

    def full(self) -> dict[str, Any]:
        """The summary with results per act (of each case's first gold item) and per group."""
        return {**self.summary(), "by_group": self.by_group(), "by_act": self.by_act()}


def _of_act(act: str) -> Callable[[CaseResult], bool]:
    return lambda r: r.case.gold[0][0] == act


def _in_group(group: str) -> Callable[[CaseResult], bool]:
    return lambda r: group in r.groups


def read_cases(path: Path, *, sample: int | None = None, seed: int = 0) -> tuple[list[EvalCase], int]:
    """Cases with a question (``question`` or ``query``) and a non-empty ``gold``; others are counted as skipped."""
    if sample is not None and sample <= 0:
        raise EvalInputError("--sample must be a positive number of lines")
    cases: list[EvalCase] = []
    skipped = 0
    try:
        lines = list(numbered_lines(path))  # a folder, a file that is not UTF-8: a sentence, not a traceback
    except IngestError as exc:
        raise EvalInputError(str(exc)) from exc
    for lineno, line in lines:
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


def run_question(question: str, *, lexicon: ActLexicon, port: SearchPort,
                 top_k: int) -> tuple[QueryProfile, RawHits, RetrievalTrace]:
    """U1–U4 for one question: what U5 reads (the profile, the hits, the retrieval trace)."""
    section = intake(question=question, specialist=_SPECIALIST, max_chars=100_000, now=datetime.now(UTC))
    profile = profile_query(section, lexicon)
    plan = plan_search(question=section.normalized, profile=profile, top_k=top_k)
    hits, trace = retrieve(plan, port, attempt=1)
    return profile, hits, trace


def run_case(case: EvalCase, *, lexicon: ActLexicon, port: SearchPort, k: int, top_k: int) -> RawHits:
    return run_question(case.question, lexicon=lexicon, port=port, top_k=max(top_k, k))[1]


def case_groups(case: EvalCase, port: SearchPort, lexicon: ActLexicon) -> tuple[str, ...]:
    """The first gold article's groups: headed or not (its indexed heading), and the Constitution, a code or a
    law (its act's title)."""
    nreg, article = case.gold[0]
    entry = lexicon.get(nreg)
    title = (entry.title if entry else "").lower()
    kind = "constitution" if title.startswith("конституція") else ("code" if "кодекс" in title else "law")
    chunks = port.article([nreg], article) if article else []
    if not chunks:
        return (kind,)
    headed = any(str(p.get("heading") or "").strip() for p in chunks)
    return ("headed" if headed else "unheaded", kind)


def evaluate(cases: list[EvalCase], *, lexicon: ActLexicon, port: SearchPort, k: int, level: Level,
             top_k: int, on_case: Callable[[CaseResult], None] | None = None) -> EvalReport:
    report = EvalReport(k=k, level=level)
    for case in cases:
        hits = run_case(case, lexicon=lexicon, port=port, k=k, top_k=top_k)
        ranked = ranked_keys(hits, level)[:k]
        acts = ranked_keys(hits, "act") if level == "act" else [key.split("#")[0] for key in ranked]
        top_acts = set(list(dict.fromkeys(acts))[:ACT_TOP_N]) if level == "act" else set(acts[:ACT_TOP_N])
        gold = report.gold_keys(case)
        ranks = [ranked.index(g) + 1 for g in gold if g in ranked]
        result = CaseResult(case, tuple(ranked), min(ranks) if ranks else None, len(ranks),
                            act_hit=any(n in top_acts for n, _ in case.gold),
                            groups=case_groups(case, port, lexicon))
        report.results.append(result)
        if on_case:
            on_case(result)
    return report


def iter_miss_lines(report: EvalReport, limit: int) -> Iterator[str]:
    for r in report.misses()[:limit]:
        gold = ", ".join(report.gold_keys(r.case))
        yield f"MISS {r.case.question!r} gold=[{gold}] top=[{', '.join(r.ranked[:5])}]"
