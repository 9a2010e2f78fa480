#!/usr/bin/env bash
# Runs the Beyond rl exercise at a tiny size. The course policy: a few imitation steps, then every
# run (format, choice, sloppy, kl0 and a K sweep) for a few GRPO steps, and its JSON checked: one
# history entry a step, diagnostics in range (rewards and skips in [0, 1], kl and entropy >= 0 or
# null for a skipped step), pass rates with intervals around them, the K sweep at one rollout
# budget, five figures. SmolLM2 with LoRA adapters (skipped without its file): two GRPO steps of
# the choice run through the KV cache, the adapters a fraction of the model.
#   scripts/smoke_rl.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

check_rl_json() {
  "$python" - "$@" <<'PY'
import json, math, sys
path, runs = sys.argv[1], sys.argv[2].split(",")
doc = json.load(open(path))
problems = []
check = lambda ok, what: ok or problems.append(what)
for key in ["program", "policy", "settings", "before", "runs", "trainable_parameters",
            "model_parameters", "peak_resident_mib", "figures"]:
    check(key in doc, f"{path}: no {key!r}")
check([run["name"] for run in doc["runs"]] == runs, f"runs {[run['name'] for run in doc['runs']]}")
check(0 < doc["trainable_parameters"] <= doc["model_parameters"], "trainable parameters")

def rate_ok(rate, where):
    low, high = rate["ci95"]
    check(rate["total"] > 0 and 0 <= rate["hits"] <= rate["total"], f"{where}: counts")
    check(low - 1e-9 <= rate["value"] <= high + 1e-9 and 0 <= low and high <= 1 + 1e-9, f"{where}: interval")

for run in doc["runs"]:
    name, history = run["name"], run["history"]
    for key in ["loss", "mean_reward", "kl", "sample_entropy", "skipped"]:
        check(len(history[key]) == run["steps"], f"{name}: one {key} a step")
    check(all(0 <= r <= 1 for r in history["mean_reward"]), f"{name}: rewards in [0, 1]")
    check(all(s in (0, 1) for s in history["skipped"]), f"{name}: skips 0 or 1")
    for key in ["kl", "sample_entropy"]:
        for value, skipped in zip(history[key], history["skipped"]):
            check((value is None) == (skipped == 1), f"{name}: {key} null exactly when skipped")
            check(value is None or value >= -1e-6, f"{name}: {key} {value}")
    check(run["updates"] == run["steps"] - sum(history["skipped"]), f"{name}: updates")
    check(run["completions_drawn"] == run["steps"] * run["group_size"], f"{name}: completions")
    check(run["seconds_per_step"] > 0, f"{name}: seconds a step")
    for when in ["before", "after"]:
        rate_ok(run[when]["pass_rate"], f"{name} {when}")
        check(len(run[when]["samples"]) > 0, f"{name} {when}: samples")
        if run["task"] == "choice":
            rate_ok(run[when]["sloppy_pass_rate"], f"{name} {when} sloppy")
            check(run[when]["sloppy_pass_rate"]["hits"] >= run[when]["pass_rate"]["hits"],
                  f"{name} {when}: the loose verifier passes at least what the strict one does")
sweep = [run for run in doc["runs"] if run["name"].startswith("k")]
choice = [run for run in doc["runs"] if run["name"] == "choice"]
if sweep and choice:
    budget = choice[0]["completions_drawn"]
    check(all(run["completions_drawn"] == budget for run in sweep), "the K sweep's budget")
check(len(doc["figures"]) == 5, f"five figures, got {len(doc['figures'])}")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"ok {path.split('/')[-1]}")
PY
}

"$bin/beyond_rl" "${common[@]}" --threads 1 --imitation-steps 20 --imitation-examples 200 \
  --rl-steps 4 --format-steps 2 --eval-tasks 6 --train-tasks 20 --ks 2 4 >/dev/null
check_rl_json "$out/rl_course.json" format,choice,sloppy,kl0,k2,k4

needs_smollm2 smoke_rl
"$bin/beyond_rl" "${common[@]}" --threads 2 --policy smollm2 --rl-steps 2 --group-size 2 \
  --new-tokens 4 --eval-tasks 3 --train-tasks 5 >/dev/null
check_rl_json "$out/rl_smollm2.json" choice
