#!/usr/bin/env bash
# Runs exercise 13_sft in a short configuration on a tiny base model (10_pretrain's smoke preset)
# and checks sft.json against exercises/13-sft/README.md: the task data (both tasks in both
# splits, held out by position), the scores before and after with their intervals, the ablation,
# the sweep, samples, the loss history, and the saved artifact's lineage (base_artifact).
#   scripts/smoke_13.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

export G2C_ARTIFACTS_DIR="$out/artifacts"  # the task data and models of this run only
mkdir -p "$G2C_ARTIFACTS_DIR/tokenizers"      # ... beside the course's tokenizer (setup made it)
ln -s "$ROOT/artifacts/tokenizers/ShakespeareTokenizer" "$G2C_ARTIFACTS_DIR/tokenizers/"
"$bin/10_pretrain" --preset smoke --threads 1 --quiet --no-plot --out "$out/pretrain" \
  --name TinyBase >/dev/null
"$bin/13_sft" "${common[@]}" --threads 1 --base TinyBase --steps 6 --batch 4 --eval-items 4 \
  --sweep 8 --max-new-tokens 8 >/dev/null

"$python" - "$out/sft.json" "$G2C_ARTIFACTS_DIR" <<'PY'
import json, math, os, sys

result = json.load(open(sys.argv[1]))
artifacts = sys.argv[2]
problems = []
check = lambda ok, what: ok or problems.append(what)

for key in ["program", "config", "dataset", "examples", "before", "after", "ablation", "sweep",
            "samples", "history", "figures", "artifact"]:
    check(key in result, f"sft.json: no {key!r}")
counts = result["dataset"]["counts"]
for split, tasks in [("train", ["speaker", "completion", "chat"]), ("val", ["speaker", "completion"])]:
    for task in tasks:
        check(counts[split][task] > 0, f"dataset: no {task} items in {split}")
check(len(result["dataset"]["speakers"]) >= 2, "dataset: speakers")
folder = result["dataset"]["folder"]
for name in ["train.jsonl", "val.jsonl", "manifest.json"]:
    check(os.path.exists(os.path.join(folder, name)), f"dataset: no {name}")
val = [json.loads(line) for line in open(os.path.join(folder, "val.jsonl"))]
train = [json.loads(line) for line in open(os.path.join(folder, "train.jsonl"))]
chunk, every = 20000, 10
check(all(item["offset"] // chunk % every == every - 1 for item in val), "val items from held-out chunks")
check(all(item["offset"] == -1 or item["offset"] // chunk % every != every - 1 for item in train),
      "train items from training chunks")
for name in ["before", "after", "ablation"]:
    for task in ["speaker", "completion"]:
        score = result[name][task]
        for measure in ["exact", "first_word", "stopped"]:
            p = score[measure]
            check(p["total"] == 4 and 0 <= p["hits"] <= 4, f"{name}.{task}.{measure}: counts")
            low, high = p["ci95"]
            check(0 <= low <= p["value"] <= high <= 1, f"{name}.{task}.{measure}: interval")
check([s["examples"] for s in result["sweep"]][0] == 8, "sweep: the 8-example run first")
check(len(result["samples"]) == 5, "five samples")
history = result["history"]
check(history["step"][-1] == 5 and all(math.isfinite(x) for x in history["train_loss"]),
      "history: six steps, finite losses")
manifest = json.load(open(os.path.join(result["artifact"], "manifest.json")))
check(manifest["name"] == "TinyBase-SFT" and manifest["base_artifact"] == "TinyBase",
      "artifact: TinyBase-SFT with base_artifact TinyBase")
check(manifest["module"] == "module-13", "artifact: module-13")
# The Python edition's loader reads it: torch.load with weights_only=True, its layout.
import torch
state = torch.load(os.path.join(result["artifact"], "model.pt"), weights_only=True)
check(sorted(state) == ["model_config", "params", "vocab_size"] and state["vocab_size"] == 264,
      "artifact: model.pt in the Python edition's layout")
check(sum(p.numel() for p in state["params"]) == manifest["parameter_count"],
      "artifact: the saved parameters are the manifest's count")
check(len(result["figures"]) == 3, "three figures")
if problems:
    print("\n".join(problems))
    print("checks: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)
print("ok sft.json, the task data and TinyBase-SFT")
print("checks: 1 passed, 0 failed, 0 skipped")
PY
"$python" "$ROOT/scripts/plot.py" "$out/sft.json" >/dev/null && echo "ok plots"

# g2c-generate reads the fine-tuned artifact's manifest, evaluated or not (a short run saves
# final_val_loss as null).
"$bin/g2c-generate" --model TinyBase-SFT --tokens 5 --threads 1 >/dev/null 2>"$out/generate.err" ||
  { echo "g2c-generate on TinyBase-SFT failed"; cat "$out/generate.err"; exit 1; }
grep -q "TinyBase-SFT: .* parameters, trained 6 steps" "$out/generate.err" ||
  { echo "g2c-generate: no model line"; cat "$out/generate.err"; exit 1; }
echo "ok g2c-generate on the fine-tuned artifact"

# g2c-chat on the fine-tuned model: --once for scripts, then a real session through a
# pseudo-terminal (script(1)): two turns, /reset, a message longer than the context (its start is
# cut), and /quit. The transcript must show the prompts, the notes and a clean exit.
"$bin/g2c-chat" --model TinyBase-SFT --once "Greet me as a courtier would." --max-new-tokens 8 \
  --threads 1 >"$out/once.txt" 2>"$out/once.err"
grep -q "TinyBase-SFT (module-13, tuned from TinyBase)" "$out/once.err" ||
  { echo "g2c-chat --once: no model line"; cat "$out/once.err"; exit 1; }
long="$(printf 'so long a speech %.0s' $(seq 1 40))"
printf 'Who goes there?\nBid me good night.\n/reset\n%s\n/bogus\n/quit\n' "$long" |
  script -qec "'$bin/g2c-chat' --model TinyBase-SFT --max-new-tokens 8 --threads 1" /dev/null \
  >"$out/session.txt" 2>&1
for expected in "you> " "model> " "[conversation forgotten]" "only its end was read" \
  "[unknown command /bogus"; do
  grep -qF -- "$expected" "$out/session.txt" ||
    { echo "g2c-chat session: no '$expected' in the transcript"; cat "$out/session.txt"; exit 1; }
done
echo "ok g2c-chat: --once and a session through a pseudo-terminal"
