#!/usr/bin/env bash
# Runs the module 11 exercises in a short configuration and checks the JSON they write against
# exercises/11-sampling/README.md: the warped distributions (sorted, summing to at most 1, top-k
# leaving k tokens, top-p the smallest set reaching p, temperature ordering the entropies), one
# sample per setting, the generation speed of both methods with identical tokens, and best-of-n's
# pool (n candidates, each score the sum of its continuation's log-probabilities, the best the
# argmax of each ranking, the single sample the first candidate).
#   scripts/smoke_11.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/11_decoding" "${common[@]}" --threads 1 --steps 20 --dim 32 --layers 1 --context 32 \
  --sample-tokens 24 --ranks 5000 >/dev/null
"$bin/11_generation_speed" "${common[@]}" --threads 1 --tokens 8 24 --prompt-tokens 4 >/dev/null
"$bin/11_best_of_n" "${common[@]}" --threads 1 --steps 20 --dim 32 --layers 1 --context 32 \
  --new-tokens 16 -n 4 >/dev/null

"$python" - "$out/decoding.json" "$out/generation_speed.json" "$out/best_of_n.json" <<'PY'
import json, math, sys

decoding = json.load(open(sys.argv[1]))
speed = json.load(open(sys.argv[2]))
best = json.load(open(sys.argv[3]))
problems = []
check = lambda ok, what: ok or problems.append(what)

for key in ["program", "device", "seed", "config", "model", "training", "ranks", "distributions",
            "samples", "figures"]:
    check(key in decoding, f"decoding.json: no {key!r}")
training = decoding["training"]
check(training["steps"][-1] == 19 and len(training["train_loss"]) == len(training["steps"]),
      "decoding.json: one loss per logged step, the last at step 19")
check(all(math.isfinite(x) for x in training["train_loss"]), "decoding.json: loss not finite")
ranks = len(decoding["ranks"])
by_name = {}
for entry in decoding["distributions"]:
    name = entry["name"]
    by_name[name] = entry
    probs, cumulative = entry["sorted_probabilities"], entry["cumulative"]
    check(len(probs) == ranks and len(cumulative) == ranks, f"{name}: {ranks} ranks")
    check(all(a >= b for a, b in zip(probs, probs[1:])), f"{name}: not sorted")
    check(all(0 <= c <= 1 + 1e-5 for c in cumulative), f"{name}: cumulative mass outside [0, 1]")
    check(entry["survivors"] >= 1 and entry["entropy"] >= 0, f"{name}: survivors or entropy")
    if entry["top_k"] is not None and entry["top_p"] is None:
        check(entry["survivors"] == entry["top_k"], f"{name}: top-k kept {entry['survivors']}")
    kept = entry["survivors"]
    if kept <= ranks:
        check(abs(cumulative[kept - 1] - 1) < 1e-4, f"{name}: the survivors do not hold all the mass")
# top-p 0.9 at T = 1: the smallest set of the model's own most likely tokens reaching 0.9.
raw, kept = by_name["model (T = 1)"]["cumulative"], by_name["top-p 0.9"]["survivors"]
if kept <= ranks:
    check(raw[kept - 1] >= 0.9 - 1e-4, "top-p 0.9: the kept tokens hold less than 0.9")
    check(kept == 1 or raw[kept - 2] < 0.9 + 1e-4, "top-p 0.9: not the smallest set reaching 0.9")
cold, model, hot = (by_name[n]["entropy"] for n in ["T = 0.5", "model (T = 1)", "T = 1.5"])
check(cold < model < hot, f"entropy should grow with temperature: {cold}, {model}, {hot}")
check(len(decoding["samples"]) == 7, "decoding.json: seven samples")
for sample in decoding["samples"]:
    check(isinstance(sample["text"], str) and len(sample["ids"]) >= 24, f"{sample['name']}: sample")
    check(0 <= sample["distinct_trigram_ratio"] <= 1, f"{sample['name']}: distinct trigram ratio")
check(len(decoding["figures"]) == 3, "decoding.json: three figures")

check(speed["config"]["max_seq_len"] == 4 + 24, "generation_speed.json: max_seq_len = prompt + 24")
check([run["new_tokens"] for run in speed["runs"]] == [8, 24], "generation_speed.json: runs")
for run in speed["runs"]:
    check(run["uncached_tokens_per_s"] > 0 and run["cached_tokens_per_s"] > 0, "speed: rates")
    check(run["same_tokens"], f"speed: cached and uncached differ at {run['new_tokens']} tokens")
check(len(speed["figures"]) == 1, "generation_speed.json: one figure")

for key in ["program", "config", "model", "training", "single", "best_raw", "best_normalized",
            "pool", "series", "figures"]:
    check(key in best, f"best_of_n.json: no {key!r}")
pool, config = best["pool"], best["config"]
check(len(pool) == 4, "best_of_n.json: four candidates")
prompt_ids = pool[0]["ids"][:config["prompt_tokens"]]
for i, c in enumerate(pool):
    check(c["ids"][:config["prompt_tokens"]] == prompt_ids, f"candidate {i}: starts with the prompt")
    check(1 <= c["new_tokens"] <= 16, f"candidate {i}: {c['new_tokens']} new tokens")
    check(c["new_tokens"] == 16 or c["ids"][-1] == config["eos_id"], f"candidate {i}: early stop")
    check(c["score"] < 0, f"candidate {i}: a log-probability below 0")
    check(abs(c["mean_score"] * c["new_tokens"] - c["score"]) < 1e-4 * abs(c["score"]),
          f"candidate {i}: mean score = score / new tokens")
check(best["same_pool"], "best_of_n.json: one seed, one pool for both rankings")
check(best["best_raw"]["score"] == max(c["score"] for c in pool), "best by log p is the argmax")
check(best["best_normalized"]["mean_score"] == max(c["mean_score"] for c in pool),
      "best per token is the argmax of the mean")
check(best["single"]["same_as_first_candidate"], "the single sample is the pool's first draw")
check(best["best_raw"]["score"] >= best["single"]["score"], "best of n beats the single sample")
check(len(best["figures"]) == 2, "best_of_n.json: two figures")
if problems:
    print("\n".join(problems))
    print("checks: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)
print("ok decoding.json, generation_speed.json, best_of_n.json")
print("checks: 1 passed, 0 failed, 0 skipped")
PY
"$python" "$ROOT/scripts/plot.py" "$out/decoding.json" "$out/generation_speed.json" \
  "$out/best_of_n.json" >/dev/null &&
  echo "ok plots"
