#!/usr/bin/env bash
# Runs the module 10 exercise in its smoke preset and checks what it writes against
# exercises/10-pretraining/README.md: pretrain.json (config, history, final losses, figures), the
# rolling checkpoint, and the model artifact (model.pt, config.json, manifest.json). A second run
# with --resume must continue the history from the checkpoint's step, not start again at 0. Then
# module 11 on the saved artifact: g2c-generate (streamed text, both speeds, the cache restarting
# past max_seq_len, --readable, a missing artifact) and 10_sample. Last, a checkpoint cut short
# with a good .bak beside it: --resume continues from the .bak and says so.
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
# model_config: the Python TransformerLM's keywords (vocab_size beside it), hidden_dim the real width.
keywords = {key: value for key, value in config["model"].items() if key != "vocab_size"}
check(sorted(keywords) == ["embedding_dim", "hidden_dim", "max_seq_len", "num_heads", "num_layers"]
      and keywords["hidden_dim"] == 4 * keywords["embedding_dim"], f"model keywords: {keywords}")
check(manifest["vocab_size"] == config["model"]["vocab_size"], "manifest vocab_size")
check(manifest["model_config"] == keywords, "manifest model_config")
check(manifest["base_artifact"] is None, "manifest base_artifact: null for a base model")
check(manifest["final_val_loss"] == final["val_loss"], "manifest final_val_loss")
check(manifest["parameter_count"] == config["parameters"], "manifest parameter_count")
saved_config = json.load(open(os.path.join(artifact, "config.json")))
check(saved_config["model_config"] == keywords, "config.json model_config")
if problems:
    print("\n".join(problems))
    print("checks: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)
print("ok pretrain.json, resume, model artifact")
print("checks: 1 passed, 0 failed, 0 skipped")
PY
"$python" "$ROOT/scripts/plot.py" "$out/pretrain.json" >/dev/null && echo "ok plots"

generate=("$bin/g2c-generate" --model "$artifact" --threads 1)
"${generate[@]}" --tokens 40 --temperature 0 --json "$out/greedy.json" >"$out/greedy.txt" 2>/dev/null
"${generate[@]}" --tokens 200 --no-compare --json "$out/long.json" >"$out/long.txt" 2>/dev/null
"${generate[@]}" --tokens 150 --temperature 0.5 --top-k 20 --readable --no-compare \
  --json "$out/readable.json" >"$out/readable.txt" 2>/dev/null
"$bin/10_sample" "${common[@]}" --threads 1 --model "$artifact" --tokens 30 >/dev/null
status=0
"$bin/g2c-generate" --model "$out/no-such-model" >/dev/null 2>"$out/missing.txt" || status=$?
"$python" - "$out" "$status" <<'PY'
import json, os, sys

out, status = sys.argv[1], int(sys.argv[2])
problems = []
check = lambda ok, what: ok or problems.append(what)
load = lambda name: json.load(open(os.path.join(out, name)))
streamed = lambda name: open(os.path.join(out, name), encoding="utf-8").read()

greedy = load("greedy.json")
check(greedy["prompt"] == "KING:" and greedy["new_tokens"] == 40, "greedy: 40 tokens after KING:")
check(streamed("greedy.txt") == greedy["text"] + "\n", "greedy: the streamed text is the decoded text")
check(greedy["cached"]["tokens_per_s"] > 0 and greedy["uncached"]["tokens_per_s"] > 0,
      "greedy: both speeds reported")
check(greedy["uncached"]["same_tokens"] is True, "greedy: generate() gives the cached tokens")
check(greedy["cache_restarts"] == 0, "greedy: 5 + 40 tokens fit the 128 positions")
long = load("long.json")
check(long["new_tokens"] == 200 and long["cache_restarts"] >= 1 and "uncached" not in long,
      f"long: 200 tokens past max_seq_len, the cache restarted, no comparison: {long['new_tokens']}")
check(streamed("long.txt") == long["text"] + "\n", "long: the streamed text is the decoded text")
readable = load("readable.json")
check(readable["settings"]["readable"] and readable["settings"]["suppressed_tokens"] > 0,
      "readable: tokens masked")
check("\ufffd" not in readable["text"], "readable: no replacement character")
samples = load("samples.json")
check([s["name"] for s in samples["samples"]] == ["raw", "readable", "greedy"], "10_sample: three samples")
check(all(s["text"].startswith("KING:") and len(s["ids"]) == 30 for s in samples["samples"]),
      "10_sample: 30 tokens after KING: each")
check("\ufffd" not in samples["samples"][1]["text"], "10_sample: the readable sample is readable")
missing = open(os.path.join(out, "missing.txt")).read()
check(status == 2 and "no-such-model" in missing,
      f"a missing artifact exits 2 naming it (exit {status}): {missing.strip()}")
if problems:
    print("\n".join(problems))
    print("checks: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)
print("ok g2c-generate and 10_sample on the saved artifact")
print("checks: 1 passed, 0 failed, 0 skipped")
PY

# A checkpoint cut in half (a full disk, a killed copy) with a good .bak beside it.
"$python" - "$out/pretrain.ckpt" <<'PY'
import os, sys
os.truncate(sys.argv[1], os.path.getsize(sys.argv[1]) // 2)
PY
cp "$out/pretrain.ckpt.bak" "$out/good.ckpt"
"${run[@]}" --steps 10 --resume >/dev/null 2>"$out/resume-bak.txt"
"$python" - "$out" <<'PY'
import json, os, sys
import torch

out = sys.argv[1]
problems = []
check = lambda ok, what: ok or problems.append(what)
said = open(os.path.join(out, "resume-bak.txt")).read()
check("pretrain.ckpt cannot be read" in said and "pretrain.ckpt.bak" in said,
      f"--resume says it read the .bak: {said.strip()!r}")
# The .bak is an archive Python's weights-only loader reads; its step is where the run went on.
bak_step = json.loads(torch.load(os.path.join(out, "good.ckpt"), weights_only=True)["meta"])["trainer"]["step"]
result = json.load(open(os.path.join(out, "pretrain.json")))
check(result["resumed_from_step"] == bak_step,
      f"resumed from the .bak's step {bak_step}, got {result['resumed_from_step']}")
check(result["history"]["step"] == list(range(10)), f"history: {result['history']['step']}")
for name in ["pretrain.ckpt", "pretrain.ckpt.bak"]:
    torch.load(os.path.join(out, name), weights_only=True)  # both readable again
if problems:
    print("\n".join(problems))
    print("checks: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)
print("ok --resume from pretrain.ckpt.bak when pretrain.ckpt is cut short")
print("checks: 1 passed, 0 failed, 0 skipped")
PY

# The fast path (10_pretrain --fused): the same model, batches and initial weights through the fused
# kernels must give the lesson path's step-0 losses; and the operator counts of both paths.
for path in lesson fused; do
  flags=(--quiet --no-plot --threads 1 --preset smoke --steps 2 --out "$out/$path"
    --artifact-dir "$out/$path-artifact")
  [[ "$path" == fused ]] && flags+=(--fused)
  "$bin/10_pretrain" "${flags[@]}" >/dev/null
done
"$bin/10_op_count" "${common[@]}" --steps 1 >/dev/null
"$python" - "$out" <<'PY'
import json, os, sys

out = sys.argv[1]
problems = []
check = lambda ok, what: ok or problems.append(what)
lesson = json.load(open(os.path.join(out, "lesson", "pretrain.json")))
fused = json.load(open(os.path.join(out, "fused", "pretrain.json")))
check(not lesson["config"]["training"]["fused_kernels"] and fused["config"]["training"]["fused_kernels"],
      "pretrain.json records fused_kernels")
for series in ["train_loss", "val_loss"]:
    a, b = lesson["history"][series][0], fused["history"][series][0]
    check(abs(a - b) < 1e-4, f"step 0 {series}: lesson {a}, fused {b} (the same model must agree)")
counts = json.load(open(os.path.join(out, "op_count.json")))
for path in ["lesson", "fused"]:
    check(counts[path]["train_step"]["ops_per_step"] > 0, f"{path}: operators per step counted")
generation = counts["fused"]["generation"]
check(generation["cached_ops_per_token"] < generation["uncached_ops_per_token"],
      f"fused: a cached token dispatches fewer operators than a full forward: {generation}")
check(counts["fused"]["train_step"]["ops_per_step"] < counts["lesson"]["train_step"]["ops_per_step"],
      "the fused path dispatches fewer operators per step than the lesson's")
if problems:
    print("\n".join(problems))
    print("checks: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)
print("ok 10_pretrain --fused agrees with the lesson path; 10_op_count")
print("checks: 1 passed, 0 failed, 0 skipped")
PY
