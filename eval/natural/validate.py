"""Validate a question file: python3 eval/natural/validate.py FILE.jsonl (CORE_ARTICLES=path to core_articles.jsonl,
default ../shared/data/laws/core_articles.jsonl beside the repository)
Each line: {"question": str, "gold": [{"act_nreg": str, "article": str}, ...], "quote": str, "style": str}
- gold articles must exist in core_articles.jsonl
- quote (<= 300 chars) must occur in the text of the FIRST gold article (whitespace/case-insensitive)
- the question must not contain the article heading verbatim"""
import json, re, sys, collections
import os
CORE = os.environ.get("CORE_ARTICLES", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data", "laws", "core_articles.jsonl"))
STYLES = {"first_person", "colloquial", "typo", "chy_mozhna", "shcho_robyty", "skilky", "plain", "story", "hto_maye_pravo"}
arts = {}
for l in open(CORE, encoding="utf-8"):
    r = json.loads(l); arts[(r["act_nreg"], r["article"])] = r
def norm(s): return re.sub(r"\s+", " ", s.replace("’", "'").replace("ʼ", "'")).strip().lower()
bad = 0; n = 0; acts = collections.Counter(); seen = set()
for i, l in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    if not l.strip(): continue
    n += 1
    try:
        q = json.loads(l)
    except Exception as e:
        print(f"line {i}: bad json {e}"); bad += 1; continue
    errs = []
    if not isinstance(q.get("question"), str) or len(q["question"]) < 10: errs.append("question missing/short")
    if q.get("style") not in STYLES: errs.append(f"style must be one of {sorted(STYLES)}")
    gold = q.get("gold") or []
    if not gold: errs.append("no gold")
    for g in gold:
        if (g.get("act_nreg"), g.get("article")) not in arts: errs.append(f"unknown article {g}")
    if gold and (gold[0].get("act_nreg"), gold[0].get("article")) in arts:
        a = arts[(gold[0]["act_nreg"], gold[0]["article"])]
        quote = q.get("quote") or ""
        if not quote or len(quote) > 300 or norm(quote) not in norm(a["text"]): errs.append("quote not found verbatim in the first gold article's text")
        h = a.get("article_heading")
        if h and len(h) > 15 and norm(h) in norm(q["question"]): errs.append("question contains the heading verbatim")
        acts[gold[0]["act_nreg"]] += 1
    k = norm(q.get("question", ""))
    if k in seen: errs.append("duplicate question")
    seen.add(k)
    if errs: bad += 1; print(f"line {i}: " + "; ".join(errs))
print(f"{n} questions, {bad} bad; per act: {dict(acts)}")
sys.exit(1 if bad else 0)
