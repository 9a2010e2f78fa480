#!/usr/bin/env bash
# Runs exercise 18b at a tiny size and checks what it wrote: the data funnel adds up (every drawn
# question accepted, held out, a duplicate or refused by the calculator), the losses are finite,
# the adapter file is there and its lineage says how it was made, both models answered every
# held-out question; then 18_calculator with that adapter (the file loads onto the packed base,
# which takes the adapter's name).
#   scripts/smoke_18b.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

needs_smollm2 smoke_18b
"$bin/18b_tool_tuning" "${common[@]}" --threads 2 --steps 2 --batch-size 2 --tool-examples 12 \
  --no-tool-questions 3 --eval-questions 4 --eval-no-tool 2 --max-tokens 24 >/dev/null
"$bin/18_calculator" "${common[@]}" --threads 2 --questions 2 --max-tokens 24 \
  --conditions native --adapter "$out/adapter.pt" >/dev/null

"$python" - "$out" <<'PY'
import json, math, os, sys

out = sys.argv[1]
problems = []
check = lambda ok, what: ok or problems.append(what)
s = json.load(open(os.path.join(out, "tool_tuning.json")))
f = s["data"]["tool_funnel"]
check(f["accepted"] == 12, f"tool funnel {f}")
check(f["drawn"] == f["accepted"] + f.get("held_out_expression", 0)
      + f.get("duplicate_expression", 0) + f.get("calculator_disagreed", 0), f"funnel adds up {f}")
n = s["data"]["no_tool_funnel"]
check(n["questions"] == 3 and n["accepted"] + n["called_a_tool"] + n["not_finished"] + n["bad_pair"] == 3,
      f"no-tool funnel {n}")
t = s["training"]
check(len(t["loss"]) == 2 and all(math.isfinite(x) and x > 0 for x in t["loss"]), f"losses {t['loss']}")
check(math.isfinite(t["held_out_loss_before"]) and math.isfinite(t["held_out_loss_after"]), "held-out loss")
check(0 < t["trainable_parameters"] < t["base_parameters"] / 10, "trainable share")
check(os.path.getsize(os.path.join(out, "adapter.pt")) > 1000, "adapter file")
for model in ("base", "adapted"):
    e = s["evaluation"][model]
    check(e["arithmetic"]["right"]["total"] == 4 and e["no_tool"]["called_a_tool"]["total"] == 2,
          f"{model} evaluated {e['arithmetic']['right']} {e['no_tool']['called_a_tool']}")
c = json.load(open(os.path.join(out, "calculator.json")))
check(c["config"]["model"] == "SmolLM2-135M-Instruct-calculator", f"calculator model {c['config']}")
check(c["conditions"]["native"]["correct"]["total"] == 2, "calculator with the adapter answered")
if problems:
    print("smoke_18b: " + "; ".join(problems))
    sys.exit(1)
print("smoke_18b: ok")
PY
