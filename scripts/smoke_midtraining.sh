#!/usr/bin/env bash
# Runs the Beyond midtraining exercise at a tiny size on a base model module 10's smoke preset
# trains for it (both artifacts in the temporary folder, never in the project's artifacts/), and
# checks what it writes: the three domains with their provenance (the Python version and each
# source file's sha256, the prose's commit), the 3 × 3 loss table on the same windows with the
# deltas from the base, each branch's realised mixture (code only: no Shakespeare row at all), the
# continuations, and the two saved branches whose manifests name the base and the mixture.
#   scripts/smoke_midtraining.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/10_pretrain" "${common[@]}" --threads 1 --preset smoke --steps 4 --artifact-dir "$out/base" \
  >/dev/null
"$bin/beyond_midtraining" "${common[@]}" --base "$out/base" --steps 4 --batch 2 --eval-iters 2 \
  --sample-tokens 8 --artifact-dir "$out/mid" >/dev/null

"$python" - "$out" <<'PY'
import json, math, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
doc = json.loads((out / "midtraining.json").read_text())
problems = [f"midtraining.json: no {key!r}" for key in
            ["program", "config", "device", "seed", "torch_version", "created", "figures",
             "domains", "models", "domain_names"] if key not in doc]
if not problems:
    code = doc["domains"]["code"]
    if not code["python_version"] or len(code["files"]) < 20 or any(
            not re.fullmatch(r"[0-9a-f]{64}", f["sha256"]) for f in code["files"]):
        problems.append("midtraining.json: the code domain's Python version and sha256 per file")
    if not re.fullmatch(r"[0-9a-f]{40}|unknown", doc["domains"]["prose"]["commit"]):
        problems.append("midtraining.json: the prose domain's commit")
    if doc["domain_names"] != ["code", "shakespeare", "prose"]:
        problems.append(f"midtraining.json: domains {doc['domain_names']}")
    models = doc["models"]
    if len(models) != 3:
        problems.append(f"midtraining.json: {len(models)} models, expected the base and two branches")
    else:
        base, code_only, replay = models
        if any(abs(d) > 0 for d in base["deltas"]):
            problems.append("midtraining.json: the base's deltas from itself are not 0")
        for m in models:
            if not all(math.isfinite(v) and v > 0 for v in m["loss_values"]):
                problems.append(f"{m['name']}: losses {m['loss_values']}")
            if set(m["continuations"]) != {"code", "prose"}:
                problems.append(f"{m['name']}: continuations {list(m['continuations'])}")
        if code_only["realised_mixture"]["shakespeare"] != 0:
            problems.append("the code-only branch drew Shakespeare rows")
        if abs(sum(replay["realised_mixture"].values()) - 1) > 1e-9:
            problems.append("the replay branch's realised shares do not sum to 1")
        for m in (code_only, replay):
            manifest = json.loads((pathlib.Path(m["artifact"]) / "manifest.json").read_text())
            if manifest.get("base_artifact") != base["name"]:
                problems.append(f"{m['name']}: base_artifact {manifest.get('base_artifact')}")
            if "mixture" not in manifest.get("training_config", {}):
                problems.append(f"{m['name']}: the manifest does not record the mixture")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print("ok midtraining.json and two artifacts")
PY
if [[ -x "$ROOT/.venv/bin/python" ]]; then
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/*.json >/dev/null
  echo "ok plots"
fi
