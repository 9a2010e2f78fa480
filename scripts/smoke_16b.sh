#!/usr/bin/env bash
# Runs module 16B's exercise in a short configuration with SmolLM2-135M-Instruct as the teacher and
# checks its result file: the funnel adds up, every accepted pair passes the shape gates and is
# new against the seeds, and the overlaps are in [0, 1].
#   scripts/smoke_16b.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

needs_smollm2 smoke_16b
"$bin/16b_synth" "${common[@]}" --threads 2 --target 3 --batch 4 --max-rounds 3 >/dev/null

"$python" - "$out" <<'PY'
import json, os, sys

s = json.load(open(os.path.join(sys.argv[1], "synth.json")))
problems = []
check = lambda ok, what: ok or problems.append(what)
f = s["funnel"]
check(f["rounds"] <= 3 and f["accepted"] == len(s["pairs"]) <= 3, f"funnel {f}")
check(f["proposed"] >= f["bad_instruction"] + f["duplicate"] + f["accepted"], f"funnel {f}")
for pair in s["pairs"]:
    check(pair["user"].strip() and pair["assistant"].strip(), f"blank pair {pair}")
o = s["overlap"]
check(all(0 <= v <= 1 for v in o["with_held_out"] + o["with_seeds"]), "overlaps out of [0, 1]")
check(all(v < s["config"]["threshold"] for v in o["with_seeds"]), "a pair too close to a seed")
check(len(s["figures"]) == 2, "figures")
for problem in problems:
    print(f"smoke_16b: {problem}")
print(f"smoke_16b: the funnel and the pairs checked; {len(problems)} problems")
sys.exit(1 if problems else 0)
PY
