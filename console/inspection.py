"""Selectors that shape one run for its console page: the waterfall, the RunContext by section, the prompt and
its evidence, the retry history, DocList, the clarification, the ledger. Reads only."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils import timezone
from pydantic import ValidationError

from console.charts import Chart, StageBar, waterfall
from console.prompt_diff import run_prompt_diff
from flags.registry import PROMPT_ASSEMBLER_ENABLED
from llm.models import CostLedgerEntry
from orch.policy import STAGES
from pipeline.context import MASKED, SECTION_TYPES
from runs.models import Run, StageEvent


@dataclass(frozen=True)
class SectionView:
    name: str
    pretty: str
    masked: bool
    contract: str  # "ok", "corrupt" (fails its contract) or "extra" (a key the contracts do not know)
    size: int
    summary: str


def _doc(run: Run) -> dict[str, Any]:
    ctx = getattr(run, "context", None)
    return dict(ctx.document) if ctx is not None else {}


def _event_span_ms(run: Run, event: StageEvent) -> tuple[float, float]:
    start = (event.started_at - run.created_at).total_seconds() * 1000
    if event.finished_at is not None:
        duration = (event.finished_at - event.started_at).total_seconds() * 1000
    elif event.duration_ms is not None:
        duration = float(event.duration_ms)
    else:  # still running: up to now
        duration = (timezone.now() - event.started_at).total_seconds() * 1000
    return max(start, 0.0), max(duration, 0.0)


def run_timeline(*, run: Run, events: Sequence[StageEvent]) -> Chart:
    bars = []
    for e in events:
        start, duration = _event_span_ms(run, e)
        bars.append(StageBar(stage=e.stage, attempt=e.attempt, start_ms=start, duration_ms=duration,
                             outcome=e.outcome, next_action=e.next_action, decided_by=e.decided_by,
                             reason=e.reason, step=e.step))
    return waterfall(STAGES, bars)


def _summary(name: str, raw: Any) -> str:
    if not isinstance(raw, Mapping):
        return type(raw).__name__
    for key in ("hits", "items", "steps", "citations", "resolutions", "applicable_norms", "options"):
        if isinstance(raw.get(key), list):
            return f"{len(raw[key])} {key}"
    for key in ("verdict", "state", "reason", "support_level", "mode"):
        if isinstance(raw.get(key), str):
            return f"{key}: {raw[key]}"[:80]
    return f"{len(raw)} fields"


def context_sections(doc: Mapping[str, Any]) -> list[SectionView]:
    """Every section of the document in stage order, then keys the contracts do not name; masked ones marked."""
    masked = set(doc.get(MASKED, []))
    names = [n for n in SECTION_TYPES if n in doc] + [k for k in doc if k not in SECTION_TYPES and k != MASKED]
    out = []
    for name in names:
        raw = doc[name]
        kind = SECTION_TYPES.get(name)
        contract = "extra"
        if kind is not None:
            try:
                kind.model_validate(raw)
                contract = "ok"
            except ValidationError:
                contract = "corrupt"
        pretty = json.dumps(raw, ensure_ascii=False, indent=2, sort_keys=False, default=str)
        out.append(SectionView(name, pretty, name in masked, contract, len(pretty), _summary(name, raw)))
    return out


def _section(doc: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    raw = doc.get(name)
    return raw if isinstance(raw, dict) else None


def prompt_view(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """``assembled_prompt`` as the page shows it: meta, budget, the layer manifest as a table, the law sources."""
    raw = _section(doc, "assembled_prompt")
    if raw is None:
        return None
    manifest = raw.get("layer_manifest") or []
    columns: list[str] = []
    for layer in manifest:
        columns += [k for k in layer if k not in columns]
    return {
        "masked": "assembled_prompt" in doc.get(MASKED, []),
        "meta": [(k, v if isinstance(v, str | int | float | bool) or v is None
                  else json.dumps(v, ensure_ascii=False)) for k, v in (raw.get("meta") or {}).items()],
        "assembler": (raw.get("meta") or {}).get("assembler"),
        "budget": list((raw.get("budget") or {}).items()),
        "manifest_columns": columns,
        "manifest_rows": [[_cell(layer.get(c)) for c in columns] for layer in manifest],
        "law_source_refs": raw.get("lawSourceRefs") or raw.get("law_source_refs") or [],
        "snippets": raw.get("snippets") or [],
    }


def _cell(v: Any) -> str:
    """A manifest value short enough for a table cell: lists joined, digests cut (the full JSON is below)."""
    if v is None:
        return ""
    if isinstance(v, list):
        return ", ".join(_cell(x) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k}: {_cell(x)}" for k, x in v.items())
    text = str(v)
    if len(text) == 64 and all(c in "0123456789abcdef" for c in text):
        return text[:12] + "…"
    return text


def run_snippet_keys(doc: Mapping[str, Any]) -> set[str]:
    """The storage keys this run referenced: only these can be opened from its page."""
    keys: set[str] = set()
    prompt = _section(doc, "assembled_prompt") or {}
    for ref in prompt.get("lawSourceRefs") or []:
        keys.add(str(ref.get("r2_key", "")))
    for s in prompt.get("snippets") or []:
        keys.update(str(k) for k in [s.get("r2_key"), *(s.get("r2_keys") or [])] if k)
    for item in (_section(doc, "evidence_assembly") or {}).get("items") or []:
        keys.update(str(k) for k in item.get("r2_keys") or [])
    for hit in (_section(doc, "raw_hits") or {}).get("hits") or []:
        keys.add(str(hit.get("r2_key", "")))
    keys.discard("")
    return keys


def retry_history(doc: Mapping[str, Any], events: Sequence[StageEvent]) -> dict[str, Any]:
    """The retrieval loop as it happened: every U4/U5/U6 attempt with what it said, and the request's last state."""
    steps = []
    for e in events:
        if e.stage not in ("U4", "U5", "U6"):
            continue
        d = e.detail or {}
        if e.stage == "U4":
            said = f"{d.get('hits', '?')} hits" + (" (seeded rerun)" if d.get("seeded") else "")
        elif e.stage == "U5":
            said = f"expand={d.get('expand')}: {d.get('reason', '')}"
        else:
            said = str(d.get("note", "")) + (f" · DocList {', '.join(map(str, d['doclist']))}" if d.get("doclist")
                                             else "")
        steps.append({"step": e.step, "stage": e.stage, "attempt": e.attempt, "said": said,
                      "next_action": e.next_action, "reason": e.reason})
    return {"steps": steps, "request": _section(doc, "retrieval_retry_request"),
            "had_retry": any(e.attempt > 1 for e in events if e.stage == "U4")}


def doclist_view(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    trace = _section(doc, "doclist_trace")
    gap = _section(doc, "coverage_gap")
    if trace is None and gap is None:
        return None
    rows = []
    for r in (trace or {}).get("resolutions") or []:
        candidates = r.get("candidates") or []
        rows.append({"query": r.get("query", ""), "reason": r.get("reason", ""),
                     "candidates": ", ".join(str(c.get("label") or c.get("title") or c.get("nreg"))
                                             + (f" ({c.get('nreg')})" if c.get("nreg") else "")
                                             + ("" if c.get("indexed", True) else " — not indexed")
                                             for c in candidates if isinstance(c, Mapping)),
                     "raw": json.dumps(r, ensure_ascii=False)})
    return {"note": (trace or {}).get("note", ""), "rows": rows, "coverage_gap": gap}


def ledger_view(rows: Sequence[CostLedgerEntry]) -> dict[str, Any]:
    by_model: dict[str, dict[str, Any]] = {}
    total: dict[str, Any] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0,
                             "cost_usd": Decimal(0), "latency_ms": 0}
    for r in rows:
        m = by_model.setdefault(f"{r.provider}/{r.model}", {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                                            "cached_tokens": 0, "cost_usd": Decimal(0)})
        for bucket in (m, total):
            bucket["calls"] += 1
            bucket["prompt_tokens"] += r.prompt_tokens
            bucket["completion_tokens"] += r.completion_tokens
            bucket["cached_tokens"] += r.cached_tokens
            bucket["cost_usd"] += r.cost_usd
        total["latency_ms"] += r.latency_ms
    return {"rows": list(rows), "by_model": sorted(by_model.items()), "total": total}


SHADOW_COMMAND = "manage.py prompt_diff"


def shadow_view(run: Run, doc: Mapping[str, Any]) -> dict[str, Any]:
    """The prompt OFF/ON compare for the run page (``console/prompt_diff.py``), or why there is none."""
    command = f"{SHADOW_COMMAND} {run.pk}"
    if "assembled_prompt" not in doc:
        return {"command": command, "note": "The run has not reached U9: no prompt to compare."}
    try:
        diff = run_prompt_diff(run=run)
    except Exception as exc:  # a failing compare (sources missing, storage down) must not take the page down
        return {"command": command, "error": f"{type(exc).__name__}: {exc}"}
    text = diff.unified()
    return {"command": command, "took": diff.took,
            "legacy_tokens": diff.legacy.total_tokens,
            "layered_tokens": diff.layered.total_tokens if diff.layered else None,
            "layered_error": diff.layered_error,
            "diff_lines": _diff_lines(text), "identical": not text.strip()}


def _diff_lines(diff: str) -> list[tuple[str, str]]:
    kinds = []
    for line in diff.splitlines():
        kind = "add" if line.startswith("+") and not line.startswith("+++") else \
            "del" if line.startswith("-") and not line.startswith("---") else ""
        kinds.append((kind, line))
    return kinds


def run_inspection(*, run: Run) -> dict[str, Any]:
    doc = _doc(run)
    events = list(StageEvent.objects.filter(run=run).order_by("step", "id"))
    ledger = list(CostLedgerEntry.objects.filter(run=run).order_by("created_at", "id"))
    answer = _section(doc, "answer")
    flag_on = run.flags.get(PROMPT_ASSEMBLER_ENABLED)
    prompt = prompt_view(doc)
    lineage = {"superseded_by": Run.objects.filter(pk=doc["superseded_by"]).first()
               if doc.get("superseded_by") else None,
               "rerun_of": doc.get("rerun_of")}
    return {
        "doc": doc,
        "events": events,
        "timeline": run_timeline(run=run, events=events),
        "sections": context_sections(doc),
        "answer": answer,
        "verify": _section(doc, "verify_result"),
        "assembler_flag": flag_on,
        "prompt_path": (prompt or {}).get("assembler") or ("layered" if flag_on else "legacy" if flag_on is False
                                                           else None),
        "prompt": prompt,
        "evidence": _section(doc, "evidence_assembly"),
        "evidence_masked": "evidence_assembly" in doc.get(MASKED, []),
        "retries": retry_history(doc, events),
        "doclist": doclist_view(doc),
        "clarification": _section(doc, "clarification"),
        "ledger": ledger_view(ledger),
        "shadow": shadow_view(run, doc),
        "lineage": lineage,
        "stages": STAGES,
        "visited": sorted({e.stage for e in events}, key=STAGES.index),
        "wall_ms": ((run.finished_at - run.created_at).total_seconds() * 1000) if run.finished_at else None,
    }
