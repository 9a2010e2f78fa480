#!/usr/bin/env bash
# Runs module 20's exercise in a short configuration and checks its result file: every setup ran
# every case, kinds and overall are proportions of the right totals, a failed case says why, and
# the tool setups called the calculator while the others did not.
#   scripts/smoke_20.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"
needs_smollm2 smoke_20
"$bin/20_capstone" "${common[@]}" --threads 2 --per-kind 1 --max-steps 2 --max-tokens 16 >/dev/null

"$python" - "$out" <<'PY'
import json, os, sys

out = sys.argv[1]
problems = []
check = lambda ok, what: ok or problems.append(what)
s = json.load(open(os.path.join(out, "capstone.json")))
check(s["config"]["per_kind"] == 1, f"config {s['config']}")
for name in ("bare", "assistant", "+tools", "+rag", "+rag+tools"):
    c = s["conditions"][name]
    check(c["passed"]["total"] == 3 and len(c["runs"]) == 3, f"{name} ran {c['passed']}")
    check(all(c["by_kind"][k]["total"] == 1 for k in ("arithmetic", "course", "general")),
          f"{name} kinds {c['by_kind']}")
    for run in c["runs"]:
        check(run["passed"] or run["failure"], f"{name} {run['case']} failed without a reason")
    calls = c["cases_with_tool_calls"]
    check(calls == 3 if "tools" in name else calls == 0, f"{name} tool calls {calls}")
check(len(s["pass_table"]["kind"]) == 4, f"pass table {s['pass_table']}")
if problems:
    print("smoke_20: " + "; ".join(problems))
    sys.exit(1)
print("smoke_20: ok")
PY
