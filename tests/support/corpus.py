"""A small slice of the demo corpus for tests: enough law to answer real questions, quick to embed."""

from __future__ import annotations

import json
from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parents[2] / "knowledge" / "demo_corpus"

SUBSET: dict[str, set[str]] = {
    "322-08": {"21", "22", "23", "24", "26", "27", "28", "36", "38", "40", "44", "47", "74", "75", "76", "77",
               "78", "79", "80", "83", "84", "108", "116"},
    "504/96-ВР": {"1", "2", "4", "5", "6", "7", "8", "9", "10", "11", "12"},
    "254к/96-ВР": {"43", "44", "45"},
    # article 4 of three procedural codes: "стаття 4 процесуального кодексу" is ambiguous (seed 002)
    "1618-15": {"1", "4"},
    "1798-12": {"4"},
    "4651-17": {"3", "4"},  # art. 3 defines the code's terms ("дізнавач" …): the definition path
}


def write_subset(target: Path) -> tuple[Path, dict[str, int]]:
    counts: dict[str, int] = {}
    with (DEMO_DIR / "demo_articles.jsonl").open(encoding="utf-8") as src, target.open("w", encoding="utf-8") as out:
        for line in src:
            rec = json.loads(line)
            if rec["article"] in SUBSET.get(rec["act_nreg"], set()):
                out.write(line)
                counts[rec["act_nreg"]] = counts.get(rec["act_nreg"], 0) + 1
    return target, counts
