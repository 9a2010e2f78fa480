#!/usr/bin/env bash
# Runs module 18's two exercises in short configurations and checks their result files: every
# condition answered every question, proportions are proportions, the constrained condition's
# first calls are valid JSON calls of the calculator (the grammar guarantees the syntax and the
# schema its shape), the benchmark's step times are there and positive, and the notes exercise
# wrote its notes (UTF-8, within their length) and scored every question.
#   scripts/smoke_18.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

needs_smollm2 smoke_18
"$bin/18_calculator" "${common[@]}" --threads 2 --questions 4 --max-tokens 24 \
  --conditions alone text constrained >/dev/null
"$bin/18_constrained_bench" "${common[@]}" --threads 2 --tokens 8 --repeats 1 >/dev/null
"$bin/18_read_the_notes" "${common[@]}" --threads 2 --limit 3 --max-tokens 16 >/dev/null

"$python" - "$out" <<'PY'
import json, os, sys

out = sys.argv[1]
problems = []
check = lambda ok, what: ok or problems.append(what)
s = json.load(open(os.path.join(out, "calculator.json")))
check(s["config"]["questions"] == 4, f"config {s['config']}")
for name in ("alone", "text", "constrained"):
    c = s["conditions"][name]
    check(c["correct"]["total"] == 4 and len(c["replies"]) == 4, f"{name} answered {c['correct']}")
    check(0 <= c["correct"]["value"] <= 1 and c["seconds_per_question"] > 0, f"{name} numbers")
for reply in s["conditions"]["constrained"]["replies"]:
    calls = reply["steps"][0]["calls"]
    check(len(calls) == 1 and calls[0]["name"] == "calculator"
          and list(calls[0]["arguments"]) == ["expression"], f"constrained call {reply['steps'][0]}")
b = json.load(open(os.path.join(out, "constrained_bench.json")))
check(len(b["mask_sweeps"]) == 3 and all(x["ms"] > 0 and x["allowed"] > 0 for x in b["mask_sweeps"]),
      f"mask sweeps {b['mask_sweeps']}")
check([x["run"] for x in b["steps"]] == ["free", "uncached", "cold cache", "warm cache"]
      and all(x["step_ms"] > 0 for x in b["steps"]), f"bench steps {b['steps']}")
n = json.load(open(os.path.join(out, "read_the_notes.json")))
for name in ("alone", "read_file", "oracle"):
    check(n["conditions"][name]["correct"]["total"] == 3, f"notes {name} {n['conditions'][name]['correct']}")
check(n["conditions"]["read_file"]["right_file"]["total"] == 3, "notes right_file")
notes = sorted(os.listdir(os.path.join(out, "notes")))
check(notes == ["q01.md", "q02.md", "q03.md"], f"notes written {notes}")
for note in notes:
    text = open(os.path.join(out, "notes", note), encoding="utf-8").read()  # valid UTF-8
    check(0 < len(text) <= 700, f"{note} is {len(text)} characters")
if problems:
    print("smoke_18: " + "; ".join(problems))
    sys.exit(1)
print("smoke_18: ok")
PY
