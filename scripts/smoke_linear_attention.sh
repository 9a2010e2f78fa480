#!/usr/bin/env bash
# Runs the Beyond linear_attention exercise programs at a tiny size and checks the JSON they
# write: the two forms' agreement and the decode table (the KV cache's bytes growing with T by the
# formula, the linear state's fixed), the three 4-layer models' state bytes (full, linear, hybrid),
# the parallel forms' timings and the 1M-token bill; the three
# models' parameter counts (linear layers add H decay scalars each) and histories; the recall
# probe's twelve distances per model; the decay curves (no decay: the normaliser grows every
# token) and the learned decays read back from the three-way run.
#   scripts/smoke_linear_attention.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/beyond_la_decode" "${common[@]}" --embedding-dim 16 --heads 2 --lengths 8 32 \
  --parallel-lengths 8 16 --model-lengths 8 32 --repeats 2 --parallel-repeats 1 >/dev/null
"$bin/beyond_la_three_way" "${common[@]}" --steps 4 --embedding-dim 16 --layers 2 --heads 2 \
  --context 16 --batch 2 --eval-every 2 --sample-tokens 8 >/dev/null
"$bin/beyond_la_recall" "${common[@]}" --steps 3 --embedding-dim 16 --layers 2 --heads 2 \
  --batch 4 --probes 48 >/dev/null
"$bin/beyond_la_decay" "${common[@]}" --embedding-dim 16 --heads 2 --tokens 20 >/dev/null

"$python" - "$out" <<'PY'
import json, math, pathlib, sys
out = pathlib.Path(sys.argv[1])
problems = []
decode = json.loads((out / "decode.json").read_text())
for key in ["program", "config", "device", "seed", "torch_version", "created", "figures"]:
    if key not in decode:
        problems.append(f"decode.json: no {key!r}")
if not decode["equivalence"]["float64"] < 1e-10:
    problems.append(f"decode.json: the two forms differ in float64 by {decode['equivalence']['float64']}")
table = decode["decode"]
if table["full_bytes"] != [2 * t * 16 * 4 for t in (8, 32)]:
    problems.append(f"decode.json: KV cache bytes {table['full_bytes']}, expected 2·T·D floats")
if table["linear_bytes"] != [(2 * 8 * 8 + 2 * 8) * 4] * 2:
    problems.append(f"decode.json: state bytes {table['linear_bytes']}, expected H·d² + H·d floats")
if not all(v > 0 for v in table["full_ms"] + table["linear_ms"] + decode["parallel"]["softmax_ms"]):
    problems.append("decode.json: a time that is not positive")
# Four layers of D 16, H 2 (d 8): a full layer caches 2·T·D floats, a linear one H·d² + H·d.
cache = lambda t: 2 * t * 16 * 4
state = (2 * 8 * 8 + 2 * 8) * 4
expected = {"full": [4 * cache(t) for t in (8, 32)], "linear": [4 * state] * 2,
            "hybrid": [3 * state + cache(t) for t in (8, 32)]}
runs = {r["name"]: r for r in decode["models"]["runs"]}
for name, want in expected.items():
    if name not in runs or runs[name]["state_bytes"] != want:
        problems.append(f"decode.json: the {name} model's state bytes {runs.get(name, {}).get('state_bytes')}, expected {want}")
bill = decode["million_token_bill"]["layer_bytes"]
if bill["MHA"] != 2 * 10**6 * 4096 * 2 or bill["linear"] != (32 * 128 * 128 + 32 * 128) * 2:
    problems.append(f"decode.json: the 1M-token bill {bill}")
three = json.loads((out / "three_way.json").read_text())
runs = {r["name"]: r for r in three.get("runs", [])}
if list(runs) != ["full", "linear", "hybrid"]:
    problems.append(f"three_way.json: runs {list(runs)}")
else:
    full = runs["full"]["parameters"]
    if runs["linear"]["parameters"] != full + 2 * 2 or runs["hybrid"]["parameters"] != full + 2:
        problems.append("three_way.json: linear layers should add H decay scalars each")
    for r in runs.values():
        if r["history"]["val_step"] != [0, 2, 3] or not math.isfinite(r["final_val_loss"]):
            problems.append(f"three_way.json: {r['name']} history {r['history']['val_step']}")
    if [len(r["learned_decays"]) for r in runs.values()] != [0, 2, 1]:
        problems.append("three_way.json: learned decays for the linear layers only")
recall = json.loads((out / "recall.json").read_text())
if [len(r["accuracy"]) for r in recall["runs"]] != [12, 12, 12]:
    problems.append("recall.json: twelve distances per model")
elif any(sum(c["total"] for c in r["by_distance"]) != 48 for r in recall["runs"]):
    problems.append("recall.json: every probe counted once")
decay = json.loads((out / "decay.json").read_text())
curves = {c["name"]: c for c in decay["curves"]}
undecayed = curves["γ = 1"]["z_norm"]
if not all(b > a for a, b in zip(undecayed, undecayed[1:])):
    problems.append("decay.json: without decay the normaliser should grow with every token")
if decay["learned"] is None or len(decay["learned"]) != 3:
    problems.append("decay.json: the learned decays of the three-way run's three linear layers")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print("ok 4 result files")
PY
if [[ -x "$ROOT/.venv/bin/python" ]]; then
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/*.json >/dev/null
  echo "ok plots"
fi
