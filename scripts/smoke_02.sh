#!/usr/bin/env bash
# Runs both module 02 exercises in a short configuration and checks the JSON each one writes.
#   scripts/smoke_02.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/02_matmul_ladder" "${common[@]}" --sizes 32 64 --min-seconds 0.02 >/dev/null
"$python" - "$out/matmul_ladder.json" <<'PY'
import json, math, sys
path = sys.argv[1]
doc = json.load(open(path))
for key in ("program", "device", "seed", "config", "peak", "rungs", "speedups", "figures"):
    assert key in doc, f"{path}: missing {key!r}"
assert doc["program"] == "02_matmul_ladder", doc["program"]
assert doc["peak"]["float32_1_thread_gflops"] > 0, "no measured peak"
for key in ("loops", "vectorized", "torch_1_thread", "torch_all_threads"):
    rung = doc["rungs"][key]
    assert rung["sizes"] == [32, 64], f"{key}: sizes {rung['sizes']}"
    assert all(s > 0 and math.isfinite(s) for s in rung["seconds"]), f"{key}: seconds"
    assert all(g > 0 for g in rung["gflops"]), f"{key}: gflops"
    tolerance = 1e-9 if rung["dtype"] == "float64" else 1e-3
    assert max(rung["max_abs_error"]) < tolerance, f"{key}: wrong product {rung['max_abs_error']}"
assert len(doc["speedups"]) >= 3
for figure in doc["figures"]:
    assert {"file", "kind"} <= figure.keys(), f"{path}: figure without file/kind"
PY
echo "ok 02_matmul_ladder"

"$bin/02_broadcasting" "${common[@]}" --batch 4 >/dev/null
"$python" - "$out/broadcasting.json" <<'PY'
import json, sys
path = sys.argv[1]
doc = json.load(open(path))
assert doc["program"] == "02_broadcasting"
assert all(case["matches_torch"] for case in doc["cases"]), "TinyArray disagrees with LibTorch"
assert any(case["shape"] is None for case in doc["cases"]), "the incompatible case did not raise"
bug = doc["classic_bug"]
assert bug["difference_shape"] == [4, 4], bug
assert bug["wrong_loss"] != bug["right_loss"]
PY
echo "ok 02_broadcasting"
if [[ -x "$ROOT/.venv/bin/python" ]]; then
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/*.json >/dev/null
  echo "ok plots"
fi
echo "checks: 2 passed, 0 failed, 0 skipped"
