#!/usr/bin/env bash
# Runs every module 09 exercise program in a short configuration and checks the JSON each one writes
# against exercises/09-transformer/README.md: the LayerNorm statistics, the per-position FFN, the
# residual identity, loss curves of the right length for each wiring and depth, the parameter
# table against the closed form, and one causal T×T map per layer and head.
#   scripts/smoke_09.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/09_layer_norm" "${common[@]}" >/dev/null
"$bin/09_ffn_per_position" "${common[@]}" >/dev/null
"$bin/09_residual_identity" "${common[@]}" >/dev/null
"$bin/09_param_budget" "${common[@]}" >/dev/null
"$bin/09_pre_post_norm" "${common[@]}" --steps 6 --log-every 2 --layers 2 >/dev/null
"$bin/09_strip_residual_norm" "${common[@]}" --steps 4 --log-every 2 --depths 1 2 \
  --wirings pre_norm no_residual no_norm >/dev/null
"$bin/09_attention_maps" "${common[@]}" --steps 5 >/dev/null

"$python" - "$out" <<'PY'
import json, math, os, sys

out = sys.argv[1]
problems = []
check = lambda ok, what: ok or problems.append(what)
load = lambda name: json.load(open(os.path.join(out, name)))

doc = load("layer_norm.json")
check(doc["normalized"] and len(doc["mean_out"]) == 6, "layer_norm: not normalized / not 6 positions")
check(all(abs(m) <= 1e-5 for m in doc["mean_out"]), "layer_norm: a mean is not 0")
check(all(abs(v - 1) <= 1e-4 for v in doc["var_out"]), "layer_norm: a variance is not 1")
check(all(abs(m - 7) < 4 for m in doc["mean_in"]), "layer_norm: the input is not randn*3+7")

doc = load("ffn_per_position.json")
change = doc["max_abs_change"]
check(doc["per_position"] and change[2] > 1e-4, "ffn: position 2 did not change")
check(max(change[:2] + change[3:]) <= 1e-6, "ffn: another position changed")

doc = load("residual_identity.json")
check(doc["identity"] and doc["max_abs_difference"] <= 1e-6, "residual: not the identity")
check(min(doc["max_change_initialised"]) > 1e-3, "residual: the untouched block moved nothing")

doc = load("param_budget.json")
check(doc["shape_check"] == {"ids": [3, 10], "logits": [3, 10, 32]}, "budget: wrong shapes")
expected = {(100, 32, 2, 32): (29796, 9.7), (100, 64, 4, 32): (208612, 3.0), (500, 64, 2, 64): (136692, 19.0)}
for row in doc["budget"]:
    key = (row["vocab_size"], row["embedding_dim"], row["num_layers"], row["max_seq_len"])
    count, saved = expected[key]
    check(row["counted"] == row["formula"] == count, f"budget {key}: {row['counted']} != {count}")
    check(round(row["tying_saves_percent"], 1) == saved, f"budget {key}: saves {row['tying_saves_percent']}")
    parts = ["token_embedding", "positions", "attention", "feed_forward", "layer_norms", "head_bias"]
    check(sum(row[p] for p in parts) == count, f"budget {key}: the parts do not add up")

def curve_ok(run, steps, label):
    check(run["steps"] == steps, f"{label}: logged steps {run['steps']} != {steps}")
    check(len(run["loss"]) == len(steps) and all(math.isfinite(x) for x in run["loss"]),
          f"{label}: losses missing or not finite")

doc = load("pre_post_norm.json")
check(sorted(doc["runs"]) == ["post_norm", "pre_norm"], "pre_post: runs")
for name, run in doc["runs"].items():
    curve_ok(run, [0, 2, 4, 5], f"pre_post {name}")
check(abs(doc["baseline_ln_vocab"] - math.log(50)) < 1e-9, "pre_post: ln V")

doc = load("strip_residual_norm.json")
check(sorted(doc["runs"]) == ["no_norm", "no_residual", "pre_norm"], "strip: wirings")
for name, runs in doc["runs"].items():
    check(len(runs["final_by_depth"]) == 2, f"strip {name}: one final loss per depth")
    for depth in ("1", "2"):
        curve_ok(runs[depth], [0, 2, 3], f"strip {name} L={depth}")
check(len(doc["figures"]) == 4, "strip: one figure per wiring and one by depth")

doc = load("attention_maps.json")
T = len(doc["tokens"])
check(T == doc["config"]["max_seq_len"], "maps: token labels")
check(len(doc["layers"]) == doc["config"]["num_layers"], "maps: one entry per layer")
for layer in doc["layers"]:
    check(len(layer["heads"]) == doc["config"]["num_heads"], "maps: one map per head")
    for head in layer["heads"]:
        w = head["weights"]
        check(len(w) == T and all(len(r) == T for r in w), "maps: not TxT")
        check(all(abs(sum(r) - 1) < 1e-4 for r in w), "maps: rows do not sum to 1")
        check(all(r[j] < 1e-6 for i, r in enumerate(w) for j in range(i + 1, T)), "maps: looks ahead")
check(0 <= doc["accuracy"] <= 1, "maps: accuracy")

if problems:
    print("\n".join(problems))
    print("checks: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)
print("ok module 09 results (7 programs)")
print("checks: 1 passed, 0 failed, 0 skipped")
PY
if [[ -x "$ROOT/.venv/bin/python" ]]; then
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/*.json >/dev/null
  echo "ok plots"
fi
