#!/usr/bin/env bash
# Runs the Beyond muon exercise programs in short configurations and checks the JSON each writes:
# the fields exercises/beyond-muon/README.md documents and the facts they show (Newton–Schulz
# gathers a random spectrum into a band around 1; AdamW's first update is the gradient's sign and
# spends more of its energy on the momentum's loudest direction than Muon's; the race's sweeps,
# seeds, token ratios, overhead rows and state bill are complete and consistent).
#   scripts/smoke_muon.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/beyond_muon_spectrum" "${common[@]}" --rows 32 --cols 16 >/dev/null
"$bin/beyond_muon_geometry" "${common[@]}" --rows 24 --cols 12 >/dev/null
"$bin/beyond_muon_race" "${common[@]}" --preset smoke --violate-partition >/dev/null

"$python" - "$out" <<'PY'
import json, math, pathlib, sys
out = pathlib.Path(sys.argv[1])
common = ["program", "config", "device", "seed", "torch_version", "created", "figures"]
expected = {
    "spectrum.json": ["coefficients", "matrices", "polynomial"],
    "geometry.json": ["momentum", "updates", "adamw_is_sign"],
    "race.json": ["runs", "best", "per_seed", "landscape", "violation", "overhead", "state_bytes",
                  "sweep"],
}
problems, docs = [], {}
for name, keys in expected.items():
    path = out / name
    if not path.exists():
        problems.append(f"{name}: missing")
        continue
    doc = docs[name] = json.loads(path.read_text())
    problems += [f"{name}: no {key!r}" for key in common + keys if key not in doc]

def check(condition, message):
    if not condition:
        problems.append(message)

if not problems:
    d = docs["spectrum.json"]
    random = d["matrices"][0]
    check([a["passes"] for a in random["after"]] == [1, 2, 3, 5], "spectrum: passes 1, 2, 3, 5")
    five = random["after"][-1]
    check(0.4 < five["min"] and five["max"] < 1.6, f"spectrum: 5 passes {five['min']}..{five['max']}")
    check(len(five["singular_values"]) == 16, "spectrum: 16 singular values of a (32, 16) matrix")
    check(abs(d["polynomial"]["f_of_one"] - 0.701) < 1e-9, "spectrum: f(1) = a + b + c")
    d = docs["geometry.json"]
    adamw, muon = d["updates"]
    check(d["adamw_is_sign"] is True, "geometry: AdamW's first update should be the gradient's sign")
    check(adamw["energy_along_top_direction"] > muon["energy_along_top_direction"],
          "geometry: Muon should spend less of its step on the loudest direction than AdamW")
    check(muon["effective_rank"] > adamw["effective_rank"], "geometry: Muon's update has more directions")
    d = docs["race.json"]
    runs = d["runs"]
    # The two sweeps (each extended until it brackets its best rate), the winners again on the
    # second seed, and the violation.
    swept = len(d["landscape"]["adamw"]) + len(d["landscape"]["muon"])
    check(4 <= swept <= 8, f"race: {swept} sweep runs")
    check(len(runs) == swept + 3, f"race: {len(runs)} runs, expected {swept + 3}")
    check(sorted(r["seed"] for r in runs) == [0] * (swept + 1) + [1, 1], "race: seeds")
    for key in ("adamw", "muon"):
        rates = [row["lr"] for row in d["landscape"][key]]
        best = d["best"][key]["lr"]
        extended_twice = len(rates) == len(d["config"][f"{key}_lrs"]) + 2
        check(rates == sorted(rates) and (extended_twice or rates[0] < best < rates[-1]),
              f"race: the {key} sweep {rates} should bracket its best rate {best}")
    for r in runs:
        check(len(r["val_loss"]) == len(r["val_tokens"]) == len(r["val_seconds"]) == 3,
              f"race {r['name']}: three evaluations")
        check(r["val_tokens"][-1] == 12 * 4 * 32, f"race {r['name']}: tokens")
        check(r["diverged_at"] is None and r["final_val_loss"] is not None, f"race {r['name']}: diverged")
        check(all(b >= a for a, b in zip(r["val_seconds"], r["val_seconds"][1:])), "race: seconds grow")
    best = d["best"]
    check(runs[best["adamw"]["run"]]["optimizer"] == "adamw" and runs[best["muon"]["run"]]["optimizer"] == "muon",
          "race: best runs")
    check(best["muon"]["adamw_lr"] == best["adamw"]["lr"], "race: Muon's AdamW side at AdamW's best rate")
    check(len(d["per_seed"]) == 2, "race: two seeds")
    for row in d["per_seed"]:
        for key in ("muon_tokens_to_adamw_final", "adamw_tokens_to_muon_final"):
            check(row[key] is None or 0 < row[key] <= 1, f"race: {key} {row[key]}")
        for key in ("muon_seconds_to_adamw_final",):
            check(row[key] is None or row[key] > 0, f"race: {key} {row[key]}")
    check(runs[d["violation"]["run"]]["tables_through_muon"] is True, "race: the violation run")
    check(len(d["overhead"]) == 1 and d["overhead"][0]["muon_matrices"] == 6, "race: overhead row")
    state = d["state_bytes"]
    check(state["computed"] == state["measured"], f"race: state bytes {state}")
    check(state["measured"]["muon_hybrid"] < state["measured"]["adamw_everything"], "race: Muon keeps less")

from smoke_checks import numbers
for name, doc in docs.items():
    check(all(math.isfinite(v) for v in numbers(doc)), f"{name}: a non-finite number")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"ok {len(docs)} result files")
PY
if [[ -x "$ROOT/.venv/bin/python" ]]; then
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/*.json >/dev/null
  echo "ok plots"
fi
