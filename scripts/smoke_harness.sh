#!/usr/bin/env bash
# Runs the Beyond harness exercise programs (all model-free, seconds) and checks what they report:
# the trace's log, the crash drills (every run finished, notes byte-identical to the uncrashed run,
# no side effect twice, the scripted kills' unknown outcome and torn line, at least the asked-for
# random kills landed), the drift (the naive policy drifts, compact_context does not) and the
# matrix (six scenarios × two harnesses, HarnessAgent reaching every end state).
#   scripts/smoke_harness.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/beyond_harness_trace" "${common[@]}" >/dev/null
"$bin/beyond_harness_crash" "${common[@]}" --random-kills 6 >/dev/null
"$bin/beyond_harness_drift" "${common[@]}" >/dev/null
"$bin/beyond_harness_matrix" "${common[@]}" >/dev/null

"$python" - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
docs = {name: json.loads((out / name).read_text())
        for name in ("trace.json", "crash.json", "drift.json", "matrix.json")}
problems = []
def check(condition, message):
    if not condition:
        problems.append(message)

trace = docs["trace.json"]
types = [e["type"] for e in trace["events"]]
check(types[0] == "task" and types[-1] == "stopped", f"trace: {types}")
check(types.count("tool_call") == 2 and types.count("tool_result") == 2, "trace: two actions")
check([e["step"] for e in trace["events"]] == list(range(len(types))), "trace: steps number the log")

crash = docs["crash.json"]
total = crash["total"]
check(total["finished"] == total["drills"], f"crash: {total['finished']} of {total['drills']} finished")
check(total["notes_identical"] == total["drills"], "crash: notes.txt differs from the uncrashed run")
check(total["duplicate_effects"] == 0 and total["missing_effects"] == 0, "crash: effects twice or missing")
check(total["random_kills"] >= 6, f"crash: {total['random_kills']} random kills landed")
by_name = {d["name"]: d for d in crash["drills"]}
inside = by_name["inside a tool, after its effect"]
check(inside["kills"] == 1 and inside["unknown_outcomes"] == 1, f"crash: inside-tool drill {inside}")
torn = by_name["in the middle of a log line"]
check(torn["torn_lines_repaired"] == 1, f"crash: torn-line drill {torn}")
check(by_name["after a result was logged"]["unknown_outcomes"] == 0, "crash: after-result drill")

drift = docs["drift.json"]["runs"]
check(drift["drop_oldest"]["wrote"] == "DRIFT", f"drift: drop_oldest wrote {drift['drop_oldest']['wrote']}")
check(drift["compact_context"]["wrote"] == "TARGET", "drift: compact_context lost the task")

rows = docs["matrix.json"]["rows"]
check(len(rows) == 12, f"matrix: {len(rows)} rows")
harness = {r["scenario"]: r for r in rows if r["harness"] == "HarnessAgent"}
check(all(r["success"] for r in harness.values()), f"matrix: HarnessAgent failed {[s for s, r in harness.items() if not r['success']]}")
# The repeat scenario's model asks for the same line again: the second copy is its choice, which
# the repeat budget bounds; everywhere else a duplicate would be the harness's doing.
check(all(r["duplicate_effects"] == 0 for s, r in harness.items() if s != "repeat"),
      "matrix: HarnessAgent duplicated an effect")
check(harness["repeat"]["duplicate_effects"] <= 1, "matrix: the repeat budget let more than two copies through")
check(harness["crash"]["resumes"] == 1 and harness["transient"]["retries"] == 1, "matrix: resume / retry counts")
check(len(docs["matrix.json"]["log_cost"]) == 5, "matrix: the log's cost at five lengths")

if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"ok {len(docs)} result files")
PY
if [[ -x "$ROOT/.venv/bin/python" ]]; then
  # trace.json is a table, with no figure to draw.
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/{crash,drift,matrix}.json >/dev/null
  echo "ok plots"
fi
