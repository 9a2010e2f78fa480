#!/usr/bin/env bash
# Runs every module 03 exercise in a short configuration and checks the JSON each one writes.
#   scripts/smoke_03.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

run() {
  local program="$1" result="$2"
  shift 2
  "$bin/$program" "${common[@]}" "$@" >/dev/null
  "$python" - "$out/$result" "$program" <<'PY'
import json, math, sys
path, program = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
for key in ("program", "device", "seed", "config", "figures"):
    assert key in doc, f"{path}: missing {key!r}"
assert doc["program"] == program, f"{path}: program is {doc['program']!r}"
from smoke_checks import numbers
assert all(math.isfinite(v) for v in numbers(doc)), f"{path}: non-finite number"
for figure in doc["figures"]:
    assert {"file", "kind"} <= figure.keys(), f"{path}: figure without file/kind"
PY
  echo "ok $program"
}

run 03_linear_regression linear_regression.json --steps 50
run 03_classifier classifier.json --steps 50
run 03_no_relu no_relu.json --steps 50
run 03_weight_decay weight_decay.json --steps 100
run 03_digits digits.json --epochs 3
"$python" - "$out/digits.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["config"]["train"] + doc["config"]["test"] == 1797, "digits: 1,797 scans"
assert doc["config"]["test"] == 359, "digits: a fifth of each class held out"
for key in ("relu", "no_relu"):
    run = doc[key]
    assert len(run["test_accuracy"]) == 3, f"digits {key}: three epochs"
    assert run["test"]["total"] == 359, f"digits {key}: 359 held out"
    assert sum(map(sum, run["confusion"])) == 359, f"digits {key}: the confusion matrix counts 359"
    assert run["test"]["value"] > 0.5, f"digits {key}: {run['test']['value']} after three epochs"
assert len(doc["examples"]) == 10 and len(doc["examples"][0]) == 28, "digits: ten 28 x 28 examples"
PY
if [[ -x "$ROOT/.venv/bin/python" ]]; then
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/*.json >/dev/null
  echo "ok plots"
fi
echo "checks: 5 passed, 0 failed, 0 skipped"
