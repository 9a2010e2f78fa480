#!/usr/bin/env bash
# Runs the Beyond specdec exercises at a tiny size: module 12's smoke preset trains three small
# rungs into the temporary folder (never the project's artifacts/). The ladder: the two smaller
# draft for the largest, and its JSON is checked: greedy output identical on every prompt,
# every drafter and k (the cached fast path and the lesson's loop), the account consistent (tokens
# per pass within [1, k + 1], acceptance within [0, 1]), positive speeds and costs, a break-even
# acceptance in [0, 1] or none, and the three figures. The MTP head: a few steps on the largest
# rung, self-speculation and a separate drafter identical to greedy decoding, one or two tokens a
# base pass, the losses before and after, two figures. SmolLM2 verifying (skipped without its
# file): prompt lookup and an early exit identical to plain cached decoding, both weight formats.
#   scripts/smoke_specdec.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/12_scaling" --quiet --no-plot --threads 1 --preset smoke --out "$out/scaling" \
  --artifact-dir "$out/ladder" >/dev/null
mapfile -t rungs < <("$python" - "$out/ladder" <<'PY'
import json, pathlib, sys
folders = [p for p in pathlib.Path(sys.argv[1]).iterdir() if (p / "manifest.json").exists()]
for p in sorted(folders, key=lambda p: json.loads((p / "manifest.json").read_text())["parameter_count"]):
    print(p)
PY
)
[[ ${#rungs[@]} == 3 ]] || { echo "smoke_specdec: expected three rungs, got ${#rungs[@]}"; exit 1; }
"$bin/beyond_specdec_ladder" "${common[@]}" --threads 1 --target "${rungs[2]}" \
  --drafters "${rungs[0]}" "${rungs[1]}" --prompts 3 --prompt-tokens 8 --new-tokens 12 --ks 1 3 \
  --repeats 1 --lesson-k 2 >/dev/null

"$python" - "$out/specdec_ladder.json" <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
problems = []
check = lambda ok, what: ok or problems.append(what)
for key in ["program", "config", "target", "drafters", "all_identical", "sample", "figures"]:
    check(key in doc, f"specdec_ladder.json: no {key!r}")
config = doc["config"]
prompts = config["prompts"]
check(doc["all_identical"] is True, "greedy output identical everywhere")
check(doc["target"]["greedy_cached_identical_prompts"] == prompts, "the cached greedy baseline identical")
check(len(doc["drafters"]) == 2, f"two drafters, got {len(doc['drafters'])}")
check(0 <= doc["target"]["greedy_distinct_4gram_share"] <= 1, "a share of 4-grams")
for name in ["greedy_tokens_per_second", "greedy_lesson_cached_tokens_per_second",
             "greedy_cached_tokens_per_second"]:
    value = doc["target"][name]
    check(math.isfinite(value) and value > 0, f"target {name} {value}")
for drafter in doc["drafters"]:
    check([row["k"] for row in drafter["per_k"]] == config["ks"], f"{drafter['name']}: one row per k")
    for row in drafter["per_k"]:
        k, where = row["k"], f"{drafter['name']} k {row['k']}"
        check(row["identical_prompts"] == prompts, f"{where}: identical on every prompt")
        for name in ["acceptance_rate", "acceptance_rate_first_16"]:
            check(0 <= row[name] <= 1, f"{where}: {name} {row[name]}")
        check(1 <= row["tokens_per_pass"] <= k + 1, f"{where}: tokens per pass {row['tokens_per_pass']}")
        check(abs(row["target_passes"] * row["tokens_per_pass"] - prompts * config["new_tokens"]) < 1e-6,
              f"{where}: passes x tokens per pass = every generated token")
        for name in ["tokens_per_second", "greedy_cached_tokens_per_second",
                     "speedup_over_greedy_cached", "predicted_speedup", "drafter_step_cost",
                     "verify_pass_cost"]:
            check(math.isfinite(row[name]) and row[name] > 0, f"{where}: {name} {row[name]}")
        even = row["break_even_acceptance"]
        check(even is None or 0 <= even <= 1, f"{where}: break-even {even}")
    lesson = drafter["lesson"]
    check(lesson["identical_prompts"] == prompts, f"{drafter['name']}: the lesson loop identical")
    for name in ["tokens_per_second", "greedy_tokens_per_second", "speedup_over_greedy"]:
        check(lesson[name] > 0, f"{drafter['name']}: lesson {name}")
check(len(doc["figures"]) == 3, f"three figures, got {len(doc['figures'])}")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print("ok specdec_ladder.json")
PY

"$bin/beyond_specdec_mtp" "${common[@]}" --threads 1 --base "${rungs[2]}" --drafter "${rungs[0]}" \
  --steps 3 --batch 2 --eval-batches 1 --prompts 2 --prompt-tokens 6 --new-tokens 8 --repeats 1 \
  >/dev/null

"$python" - "$out/specdec_mtp.json" <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
problems = []
check = lambda ok, what: ok or problems.append(what)
for key in ["program", "config", "head", "run", "ways", "all_identical", "figures"]:
    check(key in doc, f"specdec_mtp.json: no {key!r}")
check(doc["all_identical"] is True, "self-speculation and the drafter identical to greedy")
head = doc["head"]
check(0 < head["parameters"] and head["base_parameters"] > 0, "the head's and the base's sizes")
for when in ["before", "after"]:
    for name, value in head[when].items():
        check(math.isfinite(value) and value >= 0, f"head {when} {name} {value}")
    check(0 <= head[when]["head_two_ahead_accuracy"] <= 1, f"{when}: an accuracy")
check(len(doc["run"]["steps"]) == len(doc["run"]["val_loss"]) > 0, "the curves")
check(len(doc["ways"]) == 2, f"two ways of drafting, got {len(doc['ways'])}")
for way in doc["ways"]:
    check(way["identical_prompts"] == doc["config"]["prompts"], f"{way['name']}: identical")
    check(0 <= way["acceptance_rate"] <= 1, f"{way['name']}: acceptance")
    check(1 <= way["tokens_per_pass"] <= 2, f"{way['name']}: one or two tokens a pass")
    check(way["tokens_per_second"] > 0 and way["speedup_over_greedy"] > 0, f"{way['name']}: speed")
check(len(doc["figures"]) == 2, f"two figures, got {len(doc['figures'])}")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print("ok specdec_mtp.json")
PY

# SmolLM2 verifying: one passage's three extraction prompts and one open prompt, a few tokens,
# both weight formats, prompt lookup and an early exit; every output identical to plain cached
# decoding's, the account consistent, the byte-level course model refused by the vocabulary check.
needs_smollm2 smoke_specdec
"$bin/beyond_specdec_smollm2" "${common[@]}" --threads 1 --passages 1 --open 1 --new-tokens 6 \
  --drafters lookup exit4 --ks 2 --exit-k 2 --repeats 1 >/dev/null

"$python" - "$out/specdec_smollm2.json" <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
problems = []
check = lambda ok, what: ok or problems.append(what)
for key in ["program", "config", "runs", "all_identical", "vocabulary_check", "samples", "figures"]:
    check(key in doc, f"specdec_smollm2.json: no {key!r}")
check(doc["all_identical"] is True, "every drafter identical to plain cached decoding")
check(doc["vocabulary_check"]["refused"] is True
      and "vocabulary" in doc["vocabulary_check"]["message"], "the byte-level drafter refused")
check([run["weights"] for run in doc["runs"]] == ["float32", "packed"], "both weight formats")
check(len(doc["samples"]) == 4, f"four sample replies, got {len(doc['samples'])}")
for run in doc["runs"]:
    costs = run["costs"]
    check(costs["plain_step_ms"] > 0 and costs["verify_pass"]["2"] > 0, f"{run['weights']}: pass costs")
    check(costs["drafter_step"]["exit4"] > 0, f"{run['weights']}: the early exit's step cost")
    check(sorted(run["kinds"]) == ["extraction", "open"], f"{run['weights']}: two kinds of prompt")
    for kind, entry in run["kinds"].items():
        where = f"{run['weights']} {kind}"
        check(entry["plain_cached_tokens_per_second"] > 0, f"{where}: plain speed")
        check([row["way"] for row in entry["ways"]] == ["lookup k2", "exit4 k2"], f"{where}: ways")
        for row in entry["ways"]:
            at = f"{where} {row['way']}"
            check(row["identical_prompts"] == row["prompts"] == entry["prompts"], f"{at}: identical")
            check(0 <= row["acceptance_rate"] <= 1, f"{at}: acceptance {row['acceptance_rate']}")
            check(row["accepted"] <= row["drafted"] <= 2 * row["target_passes"], f"{at}: counts")
            check(1 <= row["tokens_per_pass"] <= 3, f"{at}: tokens per pass {row['tokens_per_pass']}")
            check(abs(row["tokens_per_pass"] * row["target_passes"] - entry["generated_tokens"]) < 1e-6,
                  f"{at}: passes x tokens per pass = every generated token")
            for name in ["tokens_per_second", "speedup_over_plain_cached"]:
                check(math.isfinite(row[name]) and row[name] > 0, f"{at}: {name} {row[name]}")
check(len(doc["figures"]) == 2, f"two figures, got {len(doc['figures'])}")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print("ok specdec_smollm2.json")
PY
