#!/usr/bin/env bash
# Runs every module 03b exercise program in a short configuration and checks the JSON each one
# writes: the fields documented in exercises/03b-training/README.md and the facts the exercises
# demonstrate (the hand-computed AdamW step, the clipped gradients, the schedule's landmarks, a
# diverging run that stops at its first non-finite loss).
#   scripts/smoke_03b.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/03b_lr_sweep" "${common[@]}" --steps 40 >/dev/null
# A learning rate far too large: the run must stop at its first non-finite loss, not crash.
mkdir -p "$out/diverge"
"$bin/03b_lr_sweep" --out "$out/diverge" --quiet --no-plot --steps 60 --lrs 1e6 >/dev/null
"$bin/03b_adamw_by_hand" "${common[@]}" >/dev/null
"$bin/03b_sgd_vs_adamw" "${common[@]}" --steps 30 --snapshots 0 10 30 --grid 24 >/dev/null
"$bin/03b_clip_demo" "${common[@]}" >/dev/null
"$bin/03b_schedule" "${common[@]}" >/dev/null
"$bin/03b_adamw_speed" "${common[@]}" --dim 16 --layers 1 --vocab 64 --repeats 3 --blocks 2 >/dev/null

"$python" - "$out" <<'PY'
import json, math, pathlib, sys
out = pathlib.Path(sys.argv[1])
common = ["program", "config", "device", "seed", "torch_version", "created", "figures"]
expected = {
    "lr_sweep.json": ["data", "runs", "accuracy"],
    "diverge/lr_sweep.json": ["runs"],
    "adamw_by_hand.json": ["by_hand", "adamw", "max_difference", "agrees", "first_update"],
    "sgd_vs_adamw.json": ["data", "extent", "runs", "summary", "snapshots"],
    "clip_demo.json": ["pre_clip_norm", "before", "global_clip", "per_tensor_clip", "circle"],
    "schedule.json": ["step", "lr", "landmarks"],
    "adamw_speed.json": ["parameters", "ms_per_step", "median_ms_per_step", "ratio",
                         "max_parameter_difference"],
}
problems = []
docs = {}
for name, keys in expected.items():
    path = out / name
    if not path.exists():
        problems.append(f"{name}: missing")
        continue
    doc = docs[name] = json.loads(path.read_text())
    for key in common + keys:
        if key not in doc:
            problems.append(f"{name}: no {key!r}")

def check(condition, message):
    if not condition:
        problems.append(message)

def near(a, b, tol):
    return a is not None and abs(a - b) <= tol

if not problems:
    d = docs["lr_sweep.json"]
    check(len(d["runs"]) == 5, "lr_sweep: five learning rates")
    for run in d["runs"]:
        check(len(run["train_loss"]) == len(run["val_loss"]) == len(run["step"]) <= 40,
              f"lr_sweep lr={run['lr']}: series lengths")
        check(run["verdict"] in ("crawls", "learns", "diverges"), f"lr_sweep: verdict {run['verdict']}")
    check(d["data"] == {"train": 409, "val": 103}, f"lr_sweep: split {d['data']}")
    run = docs["diverge/lr_sweep.json"]["runs"][0]
    check(run["stopped_at"] is not None and run["train_loss"][-1] is None
          and run["val_loss"][-1] is None and len(run["train_loss"]) == run["stopped_at"]
          and "non-finite" in run["end"] and run["verdict"] == "diverges",
          f"lr_sweep lr=1e6: should stop at the first non-finite loss, got {run['end']!r}")
    d = docs["adamw_by_hand.json"]
    hand = d["by_hand"]
    check(d["agrees"] is True and d["adamw"]["step_count"] == 1, "adamw_by_hand: AdamW::step differs")
    for key, value in (("m", 0.01), ("v", 1e-5), ("m_hat", 0.1), ("v_hat", 0.01), ("update", 1e-3)):
        check(near(hand[key], value, 1e-6 * value), f"adamw_by_hand: {key} = {hand[key]}")
    check(near(hand["new_p"], 0.999, 1e-9), f"adamw_by_hand: new p = {hand['new_p']}")
    check(all(near(u, 1e-3, 1e-5) for u in d["first_update"]["adamw"]),
          f"adamw_by_hand: AdamW's first update should be about lr: {d['first_update']['adamw']}")
    d = docs["sgd_vs_adamw.json"]
    check(len(d["runs"]) == 3 and len(d["snapshots"]) == 9, "sgd_vs_adamw: 3 runs x 3 snapshots")
    check(all(len(s["probability"]) == 24 and len(s["probability"][0]) == 24 for s in d["snapshots"]),
          "sgd_vs_adamw: grid size")
    for label, by_step in d["summary"].items():
        check(sorted(by_step, key=int) == ["0", "10", "30"], f"sgd_vs_adamw: {label} steps {list(by_step)}")
    check(all(len(r["val_loss"]) == 30 for r in d["runs"]), "sgd_vs_adamw: 30 steps per run")
    d = docs["clip_demo.json"]
    check(near(d["pre_clip_norm"], 5.0, 1e-4), f"clip_demo: pre-clip norm {d['pre_clip_norm']}")
    check(near(d["global_clip"]["grads"][0], 0.6, 1e-3) and near(d["global_clip"]["grads"][1], 0.8, 1e-3),
          f"clip_demo: clipped grads {d['global_clip']['grads']}")
    check(near(d["global_clip"]["norm"], 1.0, 1e-3), "clip_demo: post-clip norm")
    check(near(d["global_clip"]["angle_degrees"], d["before"]["angle_degrees"], 1e-3),
          "clip_demo: the global clip turned the gradient")
    check(near(d["per_tensor_clip"]["angle_degrees"], 45.0, 1e-2), "clip_demo: per-tensor clip")
    d = docs["schedule.json"]
    landmarks = {row["step"]: row["lr"] for row in d["landmarks"]}
    for step, lr in ((0, 3e-6), (99, 3e-4), (100, 3e-4), (550, 1.65e-4), (1000, 3e-5), (1100, 3e-5)):
        check(near(landmarks.get(step), lr, 1e-9), f"schedule: step {step} -> {landmarks.get(step)}, expected {lr}")
    check(len(d["lr"]) == 1101, "schedule: steps 0..1100")
    d = docs["adamw_speed.json"]
    check(d["ratio"] > 0 and d["max_parameter_difference"] < 1e-4,
          f"adamw_speed: ratio {d['ratio']}, difference {d['max_parameter_difference']}")

from smoke_checks import numbers
for name, doc in docs.items():
    check(all(math.isfinite(v) for v in numbers(doc)), f"{name}: a non-finite number")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"ok {len(docs)} result files")
PY
if [[ -x "$ROOT/.venv/bin/python" ]]; then
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/*.json "$out"/diverge/*.json >/dev/null
  echo "ok plots"
fi
