#!/usr/bin/env bash
# Runs exercise 14_dpo in a short configuration on a tiny fine-tuned model (10_pretrain's smoke
# preset, then a few 13_sft steps) and checks dpo.json against exercises/14-dpo/README.md: the
# preference pairs (held out by corpus position, every rejected reply different from its chosen
# one), a loss of ln 2 at step 0 (the policy starts as its reference), the reward and accuracy
# series of every beta, scores with intervals, and the saved TinyBase-DPO with its lineage.
#   scripts/smoke_14.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

export G2C_ARTIFACTS_DIR="$out/artifacts"  # the task data and models of this run only
mkdir -p "$G2C_ARTIFACTS_DIR/tokenizers"      # ... beside the course's tokenizer (setup made it)
ln -s "$ROOT/artifacts/tokenizers/ShakespeareTokenizer" "$G2C_ARTIFACTS_DIR/tokenizers/"
"$bin/10_pretrain" --preset smoke --threads 1 --quiet --no-plot --out "$out/pretrain" \
  --name TinyBase >/dev/null
"$bin/13_sft" --out "$out/sft" --quiet --no-plot --threads 1 --base TinyBase --steps 4 --batch 4 \
  --eval-items 2 --max-new-tokens 4 --no-ablation --sweep 0 >/dev/null
"$bin/14_dpo" "${common[@]}" --threads 1 --base TinyBase-SFT --steps 6 --batch 4 --eval-items 4 \
  --max-new-tokens 8 --beta 0.1 --sweep 0.5 --eval-every 3 >/dev/null

"$python" - "$out/dpo.json" <<'PY'
import json, math, os, sys

result = json.load(open(sys.argv[1]))
problems = []
check = lambda ok, what: ok or problems.append(what)

for key in ["program", "config", "dataset", "tasks", "before", "after", "runs", "samples",
            "figures", "artifact", "lineage"]:
    check(key in result, f"dpo.json: no {key!r}")
folder = result["dataset"]["folder"]
for name in ["train.jsonl", "val.jsonl", "manifest.json"]:
    check(os.path.exists(os.path.join(folder, name)), f"preference data: no {name}")
train = [json.loads(line) for line in open(os.path.join(folder, "train.jsonl"))]
val = [json.loads(line) for line in open(os.path.join(folder, "val.jsonl"))]
chunk, every = 20000, 10
check(all(p["offset"] // chunk % every == every - 1 for p in val), "val pairs from held-out chunks")
check(all(p["offset"] // chunk % every != every - 1 for p in train), "train pairs from training chunks")
check(all(p["chosen"] != p["rejected"] for p in train + val), "every rejected reply differs")
check({p["kind"] for p in train} == {"wrong_speaker", "shuffled", "repetition"}, "three kinds")
check(result["dataset"]["examples"]["train"] > 0 and result["dataset"]["examples"]["val"] > 0,
      "tokenized pairs on both sides")
check([r["beta"] for r in result["runs"]] == [0.1, 0.5], "runs: beta 0.1, then the sweep's 0.5")
for run in result["runs"]:
    h = run["history"]
    check(h["step"][0] == 0 and h["step"][-1] == 5, f"beta {run['beta']}: steps 0..5 logged")
    check(abs(h["train_loss"][0] - math.log(2)) < 1e-4,
          f"beta {run['beta']}: step-0 loss {h['train_loss'][0]} is not ln 2")
    for series in ["reward_margin", "accuracy", "chosen_reward", "rejected_reward"]:
        check(len(h[series]) == len(h["step"]) and all(math.isfinite(x) for x in h[series]),
              f"beta {run['beta']}: {series}")
    check(len(h["val_step"]) >= 2 and len(h["val_accuracy"]) == len(h["val_step"]),
          f"beta {run['beta']}: held-out evaluations")
    for task in ["speaker", "completion"]:
        p = run["preference_accuracy"][task]
        check(p["total"] > 0 and 0 <= p["ci95"][0] <= p["value"] <= p["ci95"][1] <= 1,
              f"beta {run['beta']}: preference accuracy {task}")
for name in ["before", "after"]:
    for task in ["speaker", "completion"]:
        p = result[name]["scores"][task]["exact"]
        check(p["total"] == 4 and 0 <= p["hits"] <= 4, f"{name}.{task}: counts")
check(len(result["samples"]) == 2, "two samples")
manifest = json.load(open(os.path.join(result["artifact"], "manifest.json")))
check(manifest["name"] == "TinyBase-DPO" and manifest["base_artifact"] == "TinyBase-SFT",
      "artifact: TinyBase-DPO with base_artifact TinyBase-SFT")
check(manifest["module"] == "module-14", "artifact: module-14")
check(manifest["training_config"]["lineage"] == ["TinyBase-SFT", "TinyBase"], "lineage")
check(result["lineage"] == ["TinyBase-DPO", "TinyBase-SFT", "TinyBase"], "dpo.json lineage")
# The Python edition's loader reads it: torch.load with weights_only=True, its layout.
import torch
state = torch.load(os.path.join(result["artifact"], "model.pt"), weights_only=True)
check(sorted(state) == ["model_config", "params", "vocab_size"], "model.pt: the Python layout")
check(sum(p.numel() for p in state["params"]) == manifest["parameter_count"],
      "model.pt: the manifest's parameter count")
check(len(result["figures"]) == 4, "four figures")
if problems:
    print("\n".join(problems))
    print("checks: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)
print("ok dpo.json, the preference data and TinyBase-DPO")
print("checks: 1 passed, 0 failed, 0 skipped")
PY
"$python" "$ROOT/scripts/plot.py" "$out/dpo.json" >/dev/null && echo "ok plots"
