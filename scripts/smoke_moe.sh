#!/usr/bin/env bash
# Runs the Beyond moe exercise programs at a tiny size and checks the JSON they write: the dense
# model, the lesson's dispatch loop and the sorted dispatch, each with its parameter counts and a
# positive speed (the MoE models' active count is the dense model's plus the routers'); the matched
# race's two runs with their histories and the MoE run's expert shares (each snapshot summing to 1);
# the balance sweep's three coefficients and the k sweep's dense point and three k, whose active
# counts grow by one expert per block with each k; the collapse check's E 1 model equal to the dense
# feed-forward and its untrained router's shares summing to 1; the specialisation probe's rows.
#   scripts/smoke_moe.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/beyond_moe_speed" "${common[@]}" --embedding-dim 16 --layers 2 --heads 2 --context 16 \
  --batch 2 --repeats 2 >/dev/null
"$bin/beyond_moe_collapse" "${common[@]}" --embedding-dim 16 --tokens 64 >/dev/null
tiny=(--steps 6 --embedding-dim 16 --layers 2 --heads 2 --context 16 --batch 2 --eval-every 2)
"$bin/beyond_moe_matched_active" "${common[@]}" "${tiny[@]}" >/dev/null
"$bin/beyond_moe_balance" "${common[@]}" "${tiny[@]}" >/dev/null
"$bin/beyond_moe_k_sweep" "${common[@]}" "${tiny[@]}" >/dev/null

"$python" - "$out" <<'PY'
import json, math, pathlib, sys
out = pathlib.Path(sys.argv[1])
doc = json.loads((out / "speed.json").read_text())
problems = [f"speed.json: no {key!r}" for key in
            ["program", "config", "device", "seed", "torch_version", "created", "figures", "models"]
            if key not in doc]
if not problems:
    models = {m["model"]: m for m in doc["models"]}
    dense, loop, fast = models.get("dense"), models.get("MoE, the lesson's loop"), models.get("MoE, sorted dispatch")
    if None in (dense, loop, fast):
        problems.append(f"speed.json: models {list(models)}")
    else:
        routers = 2 * (16 * 8 + 8)
        if loop["active_parameters"] != dense["total_parameters"] + routers:
            problems.append(f"active {loop['active_parameters']} != dense {dense['total_parameters']} + routers {routers}")
        if loop["total_parameters"] != fast["total_parameters"]:
            problems.append("the two MoE models differ in size")
        for m in doc["models"]:
            if not (m["tokens_per_s"] > 0 and math.isfinite(m["ms_per_step"])):
                problems.append(f"{m['model']}: speed {m['tokens_per_s']}")
race = json.loads((out / "matched_active.json").read_text())
runs = race.get("runs", [])
if len(runs) != 2:
    problems.append(f"matched_active.json: {len(runs)} runs")
else:
    dense, moe = runs
    if moe["active_parameters"] != dense["total_parameters"] + 2 * (16 * 8 + 8):
        problems.append("matched_active: MoE active != dense + routers")
    if dense["history"]["val_step"] != [0, 2, 4, 5] or moe["history"]["val_step"] != [0, 2, 4, 5]:
        problems.append("matched_active: evaluations at steps 0, 2, 4 and 5 (the last)")
    shares = moe["shares"]
    if len(shares) != 2 or any(abs(sum(snapshot) - 1) > 1e-9 for layer in shares for snapshot in layer):
        problems.append("matched_active: expert shares per layer should each sum to 1")
    if len(moe["share_steps"]) != len(shares[0]):
        problems.append("matched_active: one share snapshot per share step")
    if "balance_loss" not in moe["history"]:
        problems.append("matched_active: the balance loss's series")
    probe = race.get("specialisation", {})
    rows = [row for layer in probe.get("routing", []) for row in layer]
    if len(probe.get("routing", [])) != 2 or any(
            abs(sum(row) - 1) > 1e-9 for row, n in zip(rows, probe["class_tokens"] * 2) if n):
        problems.append("matched_active: specialisation rows per block, each a class's shares")
collapse = json.loads((out / "collapse.json").read_text())
single = collapse.get("single_expert", {})
if single.get("max_output_difference", 1) > 1e-6 or single.get("balance_loss") != 1.0:
    problems.append(f"collapse.json: E 1 against dense {single}")
router = collapse.get("untrained_router", {})
for k in ("k1", "k2"):
    if abs(sum(router.get(k, {}).get("shares", [])) - 1) > 1e-9:
        problems.append(f"collapse.json: {k} shares do not sum to 1")
balance = json.loads((out / "balance.json").read_text())
if [r["alpha"] for r in balance.get("runs", [])] != [0.0, 0.01, 1.0]:
    problems.append("balance.json: runs at alpha 0, 0.01 and 1")
elif any(not 1 / 8 <= r["busiest_share"][-1] <= 1 for r in balance["runs"]):
    problems.append("balance.json: the busiest share lies in [1/E, 1]")
sweep = json.loads((out / "k_sweep.json").read_text())
names = [r["name"] for r in sweep.get("runs", [])]
if names != ["dense", "E 8 k 1", "E 8 k 2", "E 8 k 4"]:
    problems.append(f"k_sweep.json: runs {names}")
else:
    active = sweep["points"]["active_parameters"]
    expert = 2 * 16 * 64 + 64 + 16  # one expert of D 16: 8·D² + 5·D
    if [b - a for a, b in zip(active[1:], active[2:])] != [2 * expert, 2 * 2 * expert]:
        problems.append(f"k_sweep.json: active counts {active}")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print("ok 5 result files")
PY
if [[ -x "$ROOT/.venv/bin/python" ]]; then
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/*.json >/dev/null
  echo "ok plots"
fi
