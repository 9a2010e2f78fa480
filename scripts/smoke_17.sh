#!/usr/bin/env bash
# Runs module 17's two exercises in short configurations and checks their result files: recall@k
# is a proportion that never falls as k grows, BM25 finds the evidence of most of the first
# questions, each answering condition scored every question, and the benchmark's timings are
# there and positive, with the dense vectors served by g2c-serve equal to those made in process.
#   scripts/smoke_17.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

needs_smollm2 smoke_17
"$bin/17_ask_the_course" "${common[@]}" --threads 2 --limit 6 --no-dense --answer-with none bm25 \
  --max-tokens 8 >/dev/null
bench=()
[[ -x "$bin/17_retrieval_bench" ]] && "$bin/17_retrieval_bench" "${common[@]}" --threads 2 \
  --dense-chunks 3 --queries 5 >/dev/null && bench=(retrieval_bench.json)

"$python" - "$out" "${bench[@]}" <<'PY'
import json, os, sys

out = sys.argv[1]
s = json.load(open(os.path.join(out, "ask_the_course.json")))
problems = []
check = lambda ok, what: ok or problems.append(what)
check(s["config"]["questions"] == 6 and s["config"]["chunks"] > 100, f"config {s['config']}")
for name in ("hash", "bm25"):
    at = s["recall"][name]["at"]
    values = [at[k]["value"] for k in ("1", "3", "5", "10")]
    check(all(0 <= v <= 1 for v in values) and values == sorted(values), f"{name} recall {values}")
    check(all(at[k]["total"] == 6 for k in at), f"{name} totals")
check(s["recall"]["bm25"]["at"]["10"]["hits"] >= 4, f"bm25 recall@10 {s['recall']['bm25']['at']['10']}")
for condition in ("none", "bm25"):
    a = s["answers"][condition]
    check(a["correct"]["total"] == 6 and len(a["replies"]) == 6, f"answers {condition}")
if len(sys.argv) > 2:
    b = json.load(open(os.path.join(out, sys.argv[2])))
    check(b["corpus"]["chunks"] > 700 and b["many_chunks"]["chunks"] >= 10000, "benchmark sizes")
    check(all(b["many_chunks"][k] > 0 for k in ("hash_search_ms", "dense_dim_search_ms", "bm25_query_ms")), "timings")
    check(b["dense"]["min_cosine_served_vs_in_process"] > 0.9999, f"served vectors {b['dense']}")
for problem in problems:
    print(f"smoke_17: {problem}")
print(f"smoke_17: recall, answers{' and the benchmark' if len(sys.argv) > 2 else ''} checked; {len(problems)} problems")
sys.exit(1 if problems else 0)
PY
