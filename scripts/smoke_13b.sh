#!/usr/bin/env bash
# Runs exercise 13b_lora in a short configuration on a tiny base model (10_pretrain's smoke preset)
# and checks lora.json against exercises/13b-lora/README.md: adapters on exactly the targeted
# layers, far fewer parameters trained than by full fine-tuning, the base weight untouched by
# training, merged logits equal to unmerged ones, unmerge giving the base back, the adapter file
# smaller than the model, the optimizer's state only for what it trains, scores with intervals,
# and the loss histories.
#   scripts/smoke_13b.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

export G2C_ARTIFACTS_DIR="$out/artifacts"  # the task data and models of this run only
mkdir -p "$G2C_ARTIFACTS_DIR/tokenizers"      # ... beside the course's tokenizer (setup made it)
ln -s "$ROOT/artifacts/tokenizers/ShakespeareTokenizer" "$G2C_ARTIFACTS_DIR/tokenizers/"
"$bin/10_pretrain" --preset smoke --threads 1 --quiet --no-plot --out "$out/pretrain" \
  --name TinyBase >/dev/null
"$bin/13b_lora" "${common[@]}" --threads 1 --base TinyBase --steps 6 --batch 4 --eval-items 4 \
  --max-new-tokens 8 --rank 2 --alpha 4 >/dev/null

"$python" - "$out/lora.json" <<'PY'
import json, math, os, sys

result = json.load(open(sys.argv[1]))
problems = []
check = lambda ok, what: ok or problems.append(what)

for key in ["program", "config", "dataset", "full", "lora", "merge", "figures"]:
    check(key in result, f"lora.json: no {key!r}")
full, lora, merge = result["full"], result["lora"], result["merge"]
check(len(lora["replaced"]) > 0 and all(name.split(".")[-1] in ("q_proj", "v_proj")
                                        for name in lora["replaced"]),
      f"adapters on q_proj and v_proj only: {lora['replaced']}")
check(lora["total"] > full["total"], "the adapters add parameters to the model")
check(0 < lora["trainable"] < full["trainable"] / 5, "LoRA trains far fewer parameters")
check(full["trainable"] == full["total"], "full fine-tuning trains everything")
check(lora["base_frozen"], "the base weight is bit-identical after LoRA training")
check(merge["max_logit_difference"] < 1e-4, f"merged logits: {merge['max_logit_difference']}")
check(merge["unmerge_max_weight_difference"] < 1e-5, "unmerge gives the base weight back")
check(os.path.getsize(lora["adapter"]) == lora["saved_bytes"] < full["saved_bytes"],
      "the adapter file is smaller than the model")
# AdamW keeps m and v (float32) for exactly the parameters it trains: the optimizer holds no state
# for the frozen base.
for name, run in [("full", full), ("lora", lora)]:
    check(run["optimizer_state_bytes"] == 2 * 4 * run["trainable"],
          f"{name}: optimizer state {run['optimizer_state_bytes']} bytes, expected 2 x 4 x "
          f"{run['trainable']} (m and v of the trained parameters only)")
for run in [full, lora]:
    check(run["history"]["step"][-1] == 5, "six steps")
    check(all(math.isfinite(x) for x in run["history"]["train_loss"]), "finite losses")
    for task in ["speaker", "completion"]:
        p = run["scores"][task]["exact"]
        check(p["total"] == 4 and 0 <= p["ci95"][0] <= p["value"] <= p["ci95"][1] <= 1,
              f"{task}: counts and interval")
check(len(result["figures"]) == 2, "two figures")
if problems:
    print("\n".join(problems))
    print("checks: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)
print("ok lora.json and adapter.pt")
print("checks: 1 passed, 0 failed, 0 skipped")
PY
"$python" "$ROOT/scripts/plot.py" "$out/lora.json" >/dev/null && echo "ok plots"
