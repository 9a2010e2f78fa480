#!/usr/bin/env bash
# Runs the module 10 exercise in its smoke preset and checks what it writes against
# exercises/10-pretraining/README.md: pretrain.json (config, history, final losses, figures), the
# rolling checkpoint, and the model artifact (model.pt, config.json, manifest.json). A second run
# with --resume must continue the history from the checkpoint's step, not start again at 0.
#   scripts/smoke_10.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

# The artifact goes to the temporary folder, never to the project's artifacts/.
artifact="$out/artifact"
run=("$bin/10_pretrain" "${common[@]}" --threads 1 --preset smoke --artifact-dir "$artifact")
"${run[@]}" --steps 4 >/dev/null
cp "$out/pretrain.json" "$out/first.json"
"${run[@]}" --steps 8 --resume >/dev/null

"$python" - "$out/first.json" "$out/pretrain.json" "$artifact" <<'PY'
import json, math, os, sys

first = json.load(open(sys.argv[1]))
result = json.load(open(sys.argv[2]))
artifact = sys.argv[3]
problems = []
check = lambda ok, what: ok or problems.append(what)

for key in ["program", "device", "seed", "preset", "config", "resumed_from_step", "history",
            "final", "ln_vocab", "tokens_per_s", "seconds", "checkpoint", "artifact", "figures"]:
    check(key in result, f"pretrain.json: no {key!r}")
config = result["config"]
check(config["model"]["embedding_dim"] == 128 and config["model"]["num_layers"] == 4
      and config["model"]["num_heads"] == 4 and config["model"]["max_seq_len"] == 128,
      "pretrain.json: the model is D 128, L 4, H 4, context 128")
training = config["training"]
check(training["optimizer"] == "adamw" and training["max_lr"] == 6e-4 and training["min_lr"] == 3e-5
      and training["grad_clip"] == 1.0, "pretrain.json: AdamW 6e-4 -> 3e-5, clip 1.0")
check(training["max_steps"] == 8, "pretrain.json: max_steps is the resumed run's 8")
check(abs(result["ln_vocab"] - math.log(config["model"]["vocab_size"])) < 1e-9, "ln_vocab")

h0, h = first["history"], result["history"]
check(first["resumed_from_step"] is None and h0["step"] == [0, 1, 2, 3],
      f"first run: steps 0..3 logged, got {h0['step']}")
check(result["resumed_from_step"] == 4, f"resumed from step 4, got {result['resumed_from_step']}")
check(h["step"] == list(range(8)), f"resumed history: steps 0..7 without a restart, got {h['step']}")
check(all(a < b for a, b in zip(h["step"], h["step"][1:])), "steps strictly increasing")
check(h["train_loss"][:4] == h0["train_loss"], "the resumed history keeps the first run's losses")
check(h["val_step"] == [0, 2, 3, 4, 6, 7],
      f"validation every 2 steps and at the end of each run: {h['val_step']}")
for series in ["train_loss", "lr", "grad_norm"]:
    check(len(h[series]) == len(h["step"]), f"one {series} per logged step")
for series in ["train_loss", "val_loss", "lr", "grad_norm"]:
    check(all(x is not None and math.isfinite(x) for x in h[series]), f"{series}: not finite")
# Warmup 2 then cosine to min_lr over 8 steps: rises, then falls.
check(h["lr"][0] < h["lr"][1] and h["lr"][2] > h["lr"][-1] >= 3e-5 - 1e-12, f"lr: {h['lr']}")
final = result["final"]
check(final["steps_completed"] == 8 and final["train_loss"] == h["train_loss"][-1]
      and final["val_loss"] == h["val_loss"][-1], "final losses are the last logged ones")
check(abs(final["val_perplexity"] - math.exp(final["val_loss"])) < 1e-6 * final["val_perplexity"],
      "val_perplexity = exp(val_loss)")
check(result["tokens_per_s"] > 0 and result["seconds"] > 0, "tokens_per_s and seconds")
check(os.path.isfile(result["checkpoint"]), "the rolling checkpoint exists")
check(result["artifact"]["dir"] == artifact and result["artifact"]["name"] == "ShakespeareLM-1M",
      f"pretrain.json artifact: {result['artifact']}")
check(result["artifact"]["reloaded_max_param_difference"] == 0,
      "load_model_artifact gives back the trained parameters exactly")
check(len(result["figures"]) == 3, "pretrain.json: three figures")
check(result["figures"][0]["hlines"][0]["y"] == result["ln_vocab"], "loss figure: ln V line")

for name in ["model.pt", "config.json", "manifest.json"]:
    check(os.path.isfile(os.path.join(artifact, name)), f"artifact: no {name}")
manifest = json.load(open(os.path.join(artifact, "manifest.json")))
check(manifest["name"] == "ShakespeareLM-1M" and manifest["module"] == "module-10", "manifest name")
check(manifest["steps_completed"] == 8, f"manifest steps_completed {manifest['steps_completed']}")
check(manifest["vocab_size"] == config["model"]["vocab_size"], "manifest vocab_size")
check(manifest["model_config"] == config["model"], "manifest model_config")
check(manifest["final_val_loss"] == final["val_loss"], "manifest final_val_loss")
check(manifest["parameter_count"] == config["parameters"], "manifest parameter_count")
saved_config = json.load(open(os.path.join(artifact, "config.json")))
check(saved_config["model_config"] == config["model"], "config.json model_config")
if problems:
    print("\n".join(problems))
    print("checks: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)
print("ok pretrain.json, resume, model artifact")
print("checks: 1 passed, 0 failed, 0 skipped")
PY
"$python" "$ROOT/scripts/plot.py" "$out/pretrain.json" >/dev/null && echo "ok plots"
