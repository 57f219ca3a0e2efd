"""U9 assembly of an extended (16K-token) profile against one tiktoken pass over the same candidate text (issue 15,
item 5; goal ≤ 1.2×). The candidates are real articles of the demo corpus (the Labour Code's longest, as law
evidence of a law question), more text than the profile holds, so U9 has to choose, count and cut.

    .venv/bin/python bench/u9_assembly.py [--articles 24] [--repeat 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lexery.settings")
os.environ.setdefault("LEXERY_VAR_DIR", tempfile.mkdtemp(prefix="lexery-bench-u9-"))
os.environ.setdefault("LOG_LEVEL", "WARNING")


def candidates(n: int) -> list[dict[str, str]]:
    path = ROOT / "knowledge" / "demo_corpus" / "demo_articles.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    labour = [r for r in rows if r["act_nreg"] == "322-08"]
    return sorted(labour, key=lambda r: -len(r["text"]))[:n]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--articles", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import django

    django.setup()
    from assemble.u9 import assemble_prompt
    from llm.tokenizer import count_tokens, encoding_for_model
    from pipeline.contracts import EvidenceAssembly, EvidenceItem, QueryProfile, SearchPlan

    rows = candidates(args.articles)
    texts = {f"k{i}": r["text"] for i, r in enumerate(rows)}
    items = [EvidenceItem(source="lldbi", rank=i + 1, score=round(1 - i / 100, 3), act_nreg="322-08",
                          act_label="КЗпП", article=r["article"], article_ref=f"КЗпП ст. {r['article']}",
                          heading=r.get("article_heading"), r2_keys=[f"k{i}"], channels=["dense"])
             for i, r in enumerate(rows)]
    evidence = EvidenceAssembly(items=items, support_level="strong")
    profile = QueryProfile(mode="law", law_only=True, complexity="complex")
    plan = SearchPlan(steps=[], channels=["lldbi_chunks"], docs_probe=False)
    candidate_text = "\n\n".join(texts.values())
    encoding = encoding_for_model("gpt-4o-mini")
    count_tokens(candidate_text)  # load the encoding once, outside both timings

    def u9() -> int:
        prompt, _ = assemble_prompt(evidence=evidence, profile=profile, plan=plan, texts=texts, load_warnings=[],
                                    budget_profile="extended", tokenizer_id=encoding.name, count=count_tokens,
                                    now=datetime.now(UTC))
        return len(prompt.snippets)

    def one_pass() -> int:
        return len(encoding.encode(candidate_text))

    def timed(fn: Callable[[], int]) -> float:
        started = time.perf_counter()
        fn()
        return time.perf_counter() - started

    # interleaved, so a neighbour's burst of load falls on both sides alike
    pairs = [(timed(u9), timed(one_pass)) for _ in range(args.repeat)]
    u9_s, pass_s = [a for a, _ in pairs], [b for _, b in pairs]
    result = {"articles": len(rows), "candidate_chars": len(candidate_text), "candidate_tokens": one_pass(),
              "snippets_kept": u9(), "u9_p50_ms": statistics.median(u9_s) * 1e3,
              "tiktoken_p50_ms": statistics.median(pass_s) * 1e3, "load1": os.getloadavg()[0]}
    result["ratio"] = result["u9_p50_ms"] / result["tiktoken_p50_ms"]
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"U9 extended profile: {result['articles']} candidate articles, {result['candidate_tokens']} tokens "
              f"({result['snippets_kept']} kept): U9 p50 {result['u9_p50_ms']:.1f} ms against one tiktoken pass "
              f"{result['tiktoken_p50_ms']:.1f} ms: ratio {result['ratio']:.2f} (goal <= 1.2); "
              f"load {result['load1']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
