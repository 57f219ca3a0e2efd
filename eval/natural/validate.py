"""Check a natural-question file: python3 eval/natural/validate.py FILE.jsonl

Every gold article exists in the core corpus (CORE_ARTICLES, default ../shared/data/laws/core_articles.jsonl beside
the repository); the quote is verbatim in the first gold article's text; the question does not hold that article's
heading; no question twice. Exit 1 when any line is bad."""

from __future__ import annotations

import collections
import json
import os
import re
import sys
from pathlib import Path

CORE = Path(os.environ.get("CORE_ARTICLES", Path(__file__).resolve().parents[3] / "shared" / "data" / "laws"
                           / "core_articles.jsonl"))
STYLES = {"first_person", "colloquial", "typo", "chy_mozhna", "shcho_robyty", "skilky", "plain", "story", "exam",
          "hto_maye_pravo"}
QUOTE_MAX_CHARS = 300


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("’", "'").replace("ʼ", "'")).strip().lower()


def line_errors(q: dict[str, object], arts: dict[tuple[str, str], dict[str, str]], seen: set[str]) -> list[str]:
    errs = []
    question = q.get("question")
    if not isinstance(question, str) or len(question) < 10:
        return ["question missing or shorter than 10 characters"]
    if q.get("style") not in STYLES:
        errs.append(f"style must be one of {sorted(STYLES)}")
    gold = q.get("gold") or []
    if not isinstance(gold, list) or not gold:
        return [*errs, "no gold"]
    keys = [(str(g.get("act_nreg")), str(g.get("article"))) for g in gold]
    errs += [f"unknown article {k}" for k in keys if k not in arts]
    if keys[0] in arts:
        article = arts[keys[0]]
        quote = str(q.get("quote") or "")
        if not quote or len(quote) > QUOTE_MAX_CHARS or norm(quote) not in norm(article["text"]):
            errs.append("quote not found verbatim in the first gold article's text")
        heading = article.get("article_heading")
        # an exam asks in the statute's terms, its article's heading among them (README: exam_dev / exam_test)
        if heading and len(heading) > 15 and norm(heading) in norm(question) and q.get("style") != "exam":
            errs.append("question contains the heading verbatim")
    if norm(question) in seen:
        errs.append("duplicate question")
    seen.add(norm(question))
    return errs


def main(path: str) -> int:
    arts = {}
    with CORE.open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            arts[(rec["act_nreg"], rec["article"])] = rec
    bad, n, per_act, seen = 0, 0, collections.Counter[str](), set[str]()
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            n += 1
            try:
                errs = line_errors(json.loads(line), arts, seen)
            except (json.JSONDecodeError, AttributeError) as exc:
                errs = [f"not a JSON object ({exc})"]
            if errs:
                bad += 1
                print(f"line {i}: " + "; ".join(errs))
            else:
                per_act[json.loads(line)["gold"][0]["act_nreg"]] += 1
    print(f"{n} questions, {bad} bad; per act: {dict(per_act)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
