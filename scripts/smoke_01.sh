#!/usr/bin/env bash
# Runs the module 01 exercises in a short configuration and checks what they write: 01_xor's loss
# curve, predictions and boundary grid; 01_graph's nodes, gradients (against the formula) and its
# Graphviz file; 01_engine_speed's agreement between the scalar engine and LibTorch.
#   scripts/smoke_01.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/01_xor" "${common[@]}" --steps 300 --grid 11 >/dev/null
"$bin/01_graph" "${common[@]}" >/dev/null
"$bin/01_engine_speed" "${common[@]}" --batches 1 8 --hidden 4 --min-seconds 0 >/dev/null

"$python" - "$out" <<'PY'
import json, math, os, sys

out = sys.argv[1]
problems = []
check = lambda ok, what: ok or problems.append(what)

xor = json.load(open(os.path.join(out, "xor.json")))
for key in ("program", "device", "seed", "config", "losses", "predictions", "surface", "figures"):
    check(key in xor, f"xor.json: no {key!r}")
losses = xor["losses"]
check(len(losses) == 300 and all(math.isfinite(x) for x in losses), "xor.json: 300 finite losses")
check(losses[-1] < losses[0], f"xor.json: the loss did not fall ({losses[0]} -> {losses[-1]})")
check(len(xor["predictions"]) == 4, "xor.json: four predictions")
check(len(xor["surface"]) == 11 and all(len(row) == 11 for row in xor["surface"]),
      "xor.json: an 11 x 11 boundary grid")
check(all(-1 < v < 1 for row in xor["surface"] for v in row), "xor.json: tanh outputs in (-1, 1)")

graph = json.load(open(os.path.join(out, "graph.json")))
nodes = graph["nodes"]
check(len(nodes) == 10, f"graph.json: {len(nodes)} nodes (w1, w2, b, x1, x2, two products, two sums, tanh: 10)")
c = graph["config"]
o = math.tanh(c["w1"] * c["x1"] + c["w2"] * c["x2"] + c["b"])
check(abs(graph["output"] - o) < 1e-12, "graph.json: the output is tanh(w1 x1 + w2 x2 + b)")
for name, x in (("w1", c["x1"]), ("w2", c["x2"])):
    check(abs(graph["gradients"][name] - (1 - o * o) * x) < 1e-12, f"graph.json: d out/d {name}")
check(abs(graph["gradients"]["b"] - (1 - o * o)) < 1e-12, "graph.json: d out/d b")
dot = open(os.path.join(out, graph["dot"])).read()
check(dot.startswith("digraph") and dot.count("->") == 9, "graph.dot: a digraph with 9 edges")

speed = json.load(open(os.path.join(out, "engine_speed.json")))
rows = speed["rows"]
check([r["batch"] for r in rows] == [1, 8], "engine_speed.json: one row per batch size")
check(all(r["max_difference"] <= 1e-9 for r in rows), "engine_speed.json: the engines disagree")
check(all(r["scalar_ms"] > 0 and r["torch_ms"] > 0 for r in rows), "engine_speed.json: timings")
check(rows[1]["graph_nodes"] > rows[0]["graph_nodes"], "engine_speed.json: the graph grows with the batch")

for problem in problems:
    print("smoke_01:", problem)
sys.exit(1 if problems else 0)
PY
if [[ -x "$ROOT/.venv/bin/python" ]]; then
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/xor.json "$out"/engine_speed.json >/dev/null
  echo "ok plots"
fi
echo "ok 01_xor 01_graph 01_engine_speed"
