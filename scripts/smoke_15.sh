#!/usr/bin/env bash
# Runs exercise 15_eval in a short configuration on a tiny lineage (10_pretrain's smoke preset, a
# few 13_sft steps, a few 14_dpo steps) and checks eval.json and the eval artifact against
# exercises/15-eval/README.md: the three models found by the base's name, accuracies with
# intervals, the changes along the lineage, ECE and the reliability bins, and
# artifacts/evals/<name>/{runs.jsonl, summary.md, failure_cases.md}.
#   scripts/smoke_15.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

export G2C_ARTIFACTS_DIR="$out/artifacts"  # the models and the eval of this run only
mkdir -p "$G2C_ARTIFACTS_DIR/tokenizers"
ln -s "$ROOT/artifacts/tokenizers/ShakespeareTokenizer" "$G2C_ARTIFACTS_DIR/tokenizers/"
quiet=(--quiet --no-plot --threads 1)
"$bin/10_pretrain" --preset smoke "${quiet[@]}" --out "$out/pretrain" --name TinyBase >/dev/null
"$bin/13_sft" "${quiet[@]}" --out "$out/sft" --base TinyBase --steps 3 --batch 4 --eval-items 2 \
  --max-new-tokens 4 --no-ablation --sweep 0 >/dev/null
"$bin/14_dpo" "${quiet[@]}" --out "$out/dpo" --base TinyBase-SFT --steps 3 --batch 4 \
  --eval-items 2 --max-new-tokens 4 --no-sweep >/dev/null
"$bin/15_eval" "${common[@]}" --threads 1 --base TinyBase --mc-items 12 --generation-items 5 \
  --max-new-tokens 6 >/dev/null
# A model that does not exist is refused with a message, not skipped.
if "$bin/15_eval" "${common[@]}" --threads 1 --only --model NoSuchModel >"$out/missing.txt" 2>&1; then
  echo "15_eval --model NoSuchModel: expected a failure"; exit 1
fi
grep -q "NoSuchModel" "$out/missing.txt" || { echo "no message naming NoSuchModel"; exit 1; }

"$python" - "$out/eval.json" <<'PY'
import json, math, os, sys

result = json.load(open(sys.argv[1]))
problems = []
check = lambda ok, what: ok or problems.append(what)

names = [m["name"] for m in result["models"]]
check(names == ["TinyBase", "TinyBase-SFT", "TinyBase-DPO"], f"models: {names}")
tasks = ["speaker choice (raw)", "speaker choice (per token)", "speaker reply", "completion reply"]
for model in result["models"]:
    check(list(model["tasks"]) == sorted(tasks) or set(model["tasks"]) == set(tasks),
          f"{model['name']}: tasks")
    for task, value in model["tasks"].items():
        p = value["accuracy"]
        want = 12 if "choice" in task else 5
        check(p["total"] == want, f"{model['name']} {task}: {p['total']} items, want {want}")
        check(0 <= p["ci95"][0] <= p["value"] <= p["ci95"][1] <= 1, f"{model['name']} {task}: interval")
    ece = model["tasks"]["speaker choice (raw)"]["ece"]
    check(ece is not None and 0 <= ece <= 1, f"{model['name']}: ECE")
    check(sum(model["reliability"]["count"]) == 12, f"{model['name']}: reliability bins hold every item")
by_name = {m["name"]: m for m in result["models"]}
check(by_name["TinyBase"]["change_from_base_artifact"] == {}, "the base has no parent")
for child in ["TinyBase-SFT", "TinyBase-DPO"]:
    changes = by_name[child]["change_from_base_artifact"]
    check(set(changes) == set(tasks) | {"repetitive completion replies"},
          f"{child}: a change per task and in repetition")
    for task, change in changes.items():
        low, high = change["ci95"]
        check(low <= change["difference"] <= high, f"{child} {task}: change interval")
folder = result["artifact"]
runs = [json.loads(line) for line in open(os.path.join(folder, "runs.jsonl"))]
check(len(runs) == 3 * (12 + 12 + 5 + 5), f"runs.jsonl: {len(runs)} lines")
check(all({"model", "task", "prediction", "correct"} <= set(r) for r in runs), "runs.jsonl: fields")
summary = open(os.path.join(folder, "summary.md")).read()
check("TinyBase-SFT → TinyBase-DPO" in summary and "TinyBase → TinyBase-SFT" in summary,
      "summary.md: the changes along the lineage")
failures = open(os.path.join(folder, "failure_cases.md")).read()
check(all(f"## {name}" in failures for name in names), "failure_cases.md: every model")
for model in result["models"]:
    p = model["repetitive_completion_replies"]
    check(p["total"] == 5 and 0 <= p["hits"] <= 5, f"{model['name']}: repetitive replies counted")
check("## Degenerate replies" in summary, "summary.md: the repetition table")
check(len(result["figures"]) == 2, "two figures")
if problems:
    print("\n".join(problems))
    print("checks: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)
print("ok eval.json and artifacts/evals/TinyBase-tasks")
print("checks: 1 passed, 0 failed, 0 skipped")
PY
"$python" "$ROOT/scripts/plot.py" "$out/eval.json" >/dev/null && echo "ok plots"
