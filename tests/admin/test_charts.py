"""The chart geometry is plain arithmetic: bars where the time says, lanes for every stage, nothing off the canvas."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string
from django.utils import translation

from console.charts import StageBar, latency_bars, nice_step, percentile, stacked_columns, waterfall
from orch.policy import STAGES


@pytest.mark.parametrize("peak, step", [(0, 1.0), (7, 2.0), (10, 2.0), (950, 200.0), (4800, 1000.0),
                                        (0.03, 0.01)])
def test_nice_step_divides_the_range_into_at_most_five_round_intervals(peak, step):
    assert nice_step(peak) == pytest.approx(step)
    if peak:
        assert peak / nice_step(peak) <= 5


def test_percentile_is_nearest_rank():
    values = [100.0, 200.0, 300.0, 400.0, 1000.0]
    assert (percentile(values, 50), percentile(values, 95), percentile([], 50)) == (300.0, 1000.0, 0.0)


def test_the_waterfall_has_a_lane_per_stage_and_bars_in_time_order():
    bars = [StageBar("U1", 1, 0, 100, "ok", "RUN_U2", "rule", "U1 done", 1),
            StageBar("U4", 1, 150, 400, "ok", "RUN_U5", "rule", "", 2),
            StageBar("U4", 2, 900, 100, "ok", "RUN_U5", "rule", "", 4),
            StageBar("U10", 1, 1000, 50, "error", "FAIL", "rule", "boom", 5)]

    chart = waterfall(STAGES, bars, width=980)

    drawn = [r for r in chart.rects if r.css.startswith("bar")]
    assert len(drawn) == 4
    first, retry_a, retry_b, failed = drawn
    assert first.x < retry_a.x < retry_b.x < failed.x  # time runs left to right
    assert retry_a.y == retry_b.y != first.y  # both U4 attempts share the U4 lane
    assert retry_b.stroke != "none" and retry_a.stroke == "none"  # the rerun is outlined
    assert "outcome-error" in failed.css and "boom" in failed.title
    labels = [t.text for t in chart.labels]
    assert all(stage in labels for stage in STAGES) and labels.count("not run") == 9
    assert "#2" in labels and "×2" in labels
    assert all(0 <= r.x and r.x + r.w <= chart.width for r in drawn)


def test_stacked_columns_stack_to_the_total_of_each_day():
    chart = stacked_columns(["2026-01-01", "2026-01-02"], {"done": [3, 1], "failed": [1, 0]}, title="t",
                            height=240)

    bars = [r for r in chart.rects if "·" in r.title]
    day1 = [r for r in bars if r.title.startswith("2026-01-01")]
    assert len(bars) == 3 and len(day1) == 2
    heights = {r.title.split(" · ")[1].split(":")[0]: r.h for r in day1}
    assert heights["done"] == pytest.approx(3 * heights["failed"])


def test_empty_charts_say_so_instead_of_drawing_nothing():
    assert any(t.text == "no data in this window" for t in stacked_columns(["2026-01-01"], {}, title="t").labels)
    assert any("no stage events" in t.text for t in latency_bars([], title="t").labels)


def test_the_svg_uses_dots_even_under_the_ukrainian_locale():
    chart = waterfall(STAGES, [StageBar("U1", 1, 0.5, 12.25, "ok")])

    with translation.override("uk"):
        svg = render_to_string("admin/runs/_chart.svg.html", {"chart": chart})

    assert svg.startswith("<svg") and 'data-chart="stage timeline"' in svg
    numbers = " ".join(m for m in svg.split('"') if m and m[0].isdigit())
    assert "," not in numbers
