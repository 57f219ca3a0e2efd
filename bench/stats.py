"""What the benches report: nearest-rank percentiles of their samples."""

from __future__ import annotations


def percentile(values: list[float], q: float) -> float:
    """The sample at quantile ``q`` (0–1) by nearest rank; NaN for no samples."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")
