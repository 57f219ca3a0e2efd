"""Small charts for the console as plain geometry: rectangles, lines and labels in pixels. Pure functions, no
HTML; ``templates/admin/runs/_chart.svg.html`` draws any ``Chart`` as inline SVG, so nothing runs in the browser
and nothing is fetched."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

CHAR_PX = 6.4  # average glyph width of 11px sans text: enough to keep labels from colliding
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac")
STATUS_COLORS = {"done": "#59a14f", "failed": "#e15759", "cancelled": "#9d9d9d", "running": "#4e79a7",
                 "queued": "#8fb3de", "awaiting_clarification": "#edc948"}
OUTCOME_COLORS = {"ok": "#4e79a7", "error": "#e15759", "skipped": "#b0b0b0", "running": "#8fb3de"}
RERUN_STROKE = "#f28e2b"


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str
    title: str = ""  # the tooltip: the full story of the bar
    stroke: str = "none"
    css: str = ""


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "start"
    size: float = 11
    fill: str = "currentColor"
    weight: str = "normal"


@dataclass(frozen=True)
class Rule:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str = "#ccc"
    dash: str = ""


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    title: str
    rects: list[Rect] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    css: str = ""


def nice_step(max_value: float, ticks: int = 5) -> float:
    """A 1/2/5×10ⁿ step that divides ``max_value`` into at most ``ticks`` intervals."""
    if max_value <= 0:
        return 1.0
    raw = max_value / ticks
    power = 10 ** math.floor(math.log10(raw))
    for mult in (1, 2, 5, 10):
        if mult * power >= raw:
            return float(mult * power)
    return float(10 * power)


def fmt_ms(ms: float) -> str:
    if ms >= 60_000:
        return f"{ms / 60_000:.1f} min"
    if ms >= 1000:
        return f"{ms / 1000:.2f} s".replace(".00 s", " s")
    return f"{ms:.0f} ms"


def fmt_value(v: float, unit: str = "") -> str:
    if unit == "$":
        return f"${v:.4f}" if v < 1 else f"${v:.2f}"
    if unit == "ms":
        return fmt_ms(v)
    return f"{v:g}"


# --- the run waterfall ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StageBar:
    stage: str
    attempt: int
    start_ms: float  # from the run's creation
    duration_ms: float
    outcome: str
    next_action: str = ""
    decided_by: str = ""
    reason: str = ""
    step: int = 0


def waterfall(stages: Sequence[str], bars: Sequence[StageBar], *, width: int = 980,
              lane_h: int = 22) -> Chart:
    """One lane per stage (all twelve, visited or not); one bar per attempt at its time; reruns outlined; each lane
    ends with what ORCH decided after its last attempt and who decided it."""
    label_w, note_w, top, bottom = 118, 300, 24, 8
    plot_w = width - label_w - note_w
    total = max([b.start_ms + b.duration_ms for b in bars] + [1.0])
    step = nice_step(total, 6)
    span = step * math.ceil(total / step)
    scale = plot_w / span
    height = top + lane_h * len(stages) + bottom
    chart = Chart(width, height, "stage timeline", css="waterfall")
    for i in range(int(span / step) + 1):
        x = label_w + i * step * scale
        chart.rules.append(Rule(x, top - 4, x, height - bottom, "#e3e3e3"))
        chart.labels.append(Label(x, top - 9, fmt_ms(i * step), "middle", 10, "#888"))
    by_stage: dict[str, list[StageBar]] = {}
    for b in bars:
        by_stage.setdefault(b.stage, []).append(b)
    for lane, stage in enumerate(stages):
        y = top + lane * lane_h
        mine = sorted(by_stage.get(stage, []), key=lambda b: (b.start_ms, b.attempt))
        if lane % 2 == 0:
            chart.rects.append(Rect(0, y, width, lane_h, "rgba(127,127,127,0.06)"))
        chart.labels.append(Label(8, y + lane_h * 0.68, stage, weight="bold",
                                  fill="currentColor" if mine else "#aaa"))
        if len(mine) > 1:
            chart.labels.append(Label(44, y + lane_h * 0.68, f"×{len(mine)}", size=10, fill=RERUN_STROKE))
        if not mine:
            chart.labels.append(Label(label_w + 4, y + lane_h * 0.68, "not run", size=10, fill="#aaa"))
            continue
        for b in mine:
            x = label_w + b.start_ms * scale
            w = max(b.duration_ms * scale, 2.5)
            title = (f"{b.stage} attempt {b.attempt} (step {b.step}): {b.outcome}, {fmt_ms(b.duration_ms)}, "
                     f"started at +{fmt_ms(b.start_ms)}"
                     + (f"; next {b.next_action} decided by {b.decided_by or '—'}: {b.reason}" if b.next_action
                        else ""))
            chart.rects.append(Rect(x, y + 4, w, lane_h - 8, OUTCOME_COLORS.get(b.outcome, "#888"), title,
                                    RERUN_STROKE if b.attempt > 1 else "none", f"bar outcome-{b.outcome}"))
            if b.attempt > 1:
                chart.labels.append(Label(x + w + 3, y + lane_h * 0.68, f"#{b.attempt}", size=10,
                                          fill=RERUN_STROKE, weight="bold"))
        last = mine[-1]
        note = f"{fmt_ms(sum(b.duration_ms for b in mine))}"
        if last.next_action:
            note += f" → {last.next_action}" + (f" · {last.decided_by}" if last.decided_by else "")
        chart.labels.append(Label(width - note_w + 10, y + lane_h * 0.68, _clip(note, note_w - 14), size=10.5))
    return chart


def _clip(text: str, px: float) -> str:
    room = int(px / CHAR_PX)
    return text if len(text) <= room else text[: max(room - 1, 1)] + "…"


# --- dashboard charts ----------------------------------------------------------------------------------------
def stacked_columns(categories: Sequence[str], series: Mapping[str, Sequence[float]], *, title: str,
                    colors: Mapping[str, str] | None = None, unit: str = "", width: int = 560,
                    height: int = 240) -> Chart:
    """One column per category (a day), stacked by series (status or model), with a legend underneath."""
    left, right, top = 56, 10, 14
    names = list(series)
    legend_cols = 3
    legend_rows = math.ceil(len(names) / legend_cols) if names else 0
    bottom = 34 + 16 * legend_rows
    plot_w, plot_h = width - left - right, height - top - bottom
    totals = [sum(series[n][i] for n in names) for i in range(len(categories))]
    step = nice_step(max([*totals, 0.0]) or 1.0, 4)
    span = step * max(math.ceil(max([*totals, 0.0]) / step), 1)
    chart = Chart(width, height, title)
    for i in range(round(span / step) + 1):
        y = top + plot_h - i * step * plot_h / span
        chart.rules.append(Rule(left, y, width - right, y, "#e3e3e3"))
        chart.labels.append(Label(left - 6, y + 4, fmt_value(i * step, unit), "end", 10, "#888"))
    col_w = plot_w / max(len(categories), 1)
    color = {n: (colors or {}).get(n, PALETTE[k % len(PALETTE)]) for k, n in enumerate(names)}
    for i, cat in enumerate(categories):
        x = left + i * col_w + col_w * 0.15
        y = top + plot_h
        for n in names:
            v = series[n][i]
            if v <= 0:
                continue
            h = v * plot_h / span
            y -= h
            chart.rects.append(Rect(x, y, col_w * 0.7, h, color[n], f"{cat} · {n}: {fmt_value(v, unit)}"))
        if len(categories) <= 16 or i % math.ceil(len(categories) / 16) == 0:
            chart.labels.append(Label(x + col_w * 0.35, top + plot_h + 14, cat[5:] if len(cat) == 10 else cat,
                                      "middle", 10, "#666"))
    for k, n in enumerate(names):
        col_px = plot_w / legend_cols
        lx, ly = left + (k % legend_cols) * col_px, height - bottom + 32 + 16 * (k // legend_cols)
        chart.rects.append(Rect(lx, ly - 9, 10, 10, color[n], n))
        chart.labels.append(Label(lx + 14, ly, _clip(n.replace("_", " "), col_px - 18), size=10.5))
    if not categories or not any(totals):
        chart.labels.append(Label(left + plot_w / 2, top + plot_h / 2, "no data in this window", "middle", 12,
                                  "#999"))
    return chart


def latency_bars(rows: Sequence[tuple[str, float, float, int]], *, title: str, width: int = 560,
                 row_h: int = 19) -> Chart:
    """Per stage (label, p50, p95, count): a pale p95 bar with the p50 bar over it, and both values written."""
    left, right, top = 44, 210, 20
    height = top + row_h * max(len(rows), 1) + 10
    plot_w = width - left - right
    peak = max([r[2] for r in rows] + [1.0])
    step = nice_step(peak, 4)
    span = step * math.ceil(peak / step)
    chart = Chart(width, height, title)
    for i in range(round(span / step) + 1):
        x = left + i * step * plot_w / span
        chart.rules.append(Rule(x, top - 4, x, height - 10, "#e3e3e3"))
        chart.labels.append(Label(x, top - 8, fmt_ms(i * step), "middle", 10, "#888"))
    for i, (stage, p50, p95, n) in enumerate(rows):
        y = top + i * row_h
        chart.labels.append(Label(6, y + row_h * 0.68, stage, weight="bold"))
        chart.rects.append(Rect(left, y + 3, max(p95 * plot_w / span, 1.5), row_h - 6, "#c6d7ea",
                                f"{stage} p95 {fmt_ms(p95)} over {n} runs"))
        chart.rects.append(Rect(left, y + 6, max(p50 * plot_w / span, 1.5), row_h - 12, "#4e79a7",
                                f"{stage} p50 {fmt_ms(p50)} over {n} runs"))
        chart.labels.append(Label(width - right + 8, y + row_h * 0.68,
                                  f"p50 {fmt_ms(p50)} · p95 {fmt_ms(p95)} · n={n}", size=10))
    if not rows:
        chart.labels.append(Label(width / 2, top + 12, "no stage events in this window", "middle", 12, "#999"))
    return chart


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of an ascending sequence (what an operator means by "p95 of these runs")."""
    if not sorted_values:
        return 0.0
    rank = max(math.ceil(q / 100 * len(sorted_values)), 1)
    return float(sorted_values[min(rank, len(sorted_values)) - 1])
