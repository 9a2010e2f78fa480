#!/usr/bin/env bash
# Runs the Beyond multimodal exercise programs in short configurations and checks what they write:
# the patch cuts (token counts, exact round trips, the second of two images reaching only its own
# placeholders), the captioner at both patch sizes and module 03's MLP on one split (losses finite,
# every held-out digit scored from a generated caption, confusion matrices that add up), and the
# permutation run; the captioner once on generated 28 × 28 digits at the lesson's patch sizes.
#   scripts/smoke_multimodal.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/beyond_mm_patches" "${common[@]}" >/dev/null
"$bin/beyond_mm_caption" "${common[@]}" --steps 20 --mlp-epochs 2 >/dev/null
"$bin/beyond_mm_permute" "${common[@]}" --steps 20 >/dev/null
G2C_ARTIFACTS_DIR="$out/artifacts" "$bin/beyond_mm_caption" "${common[@]}" --data synth28 --steps 5 \
  --mlp-epochs 1 >/dev/null

"$python" - "$out" <<'PY'
import json, math, pathlib, sys
out = pathlib.Path(sys.argv[1])
docs = {name: json.loads((out / name).read_text())
        for name in ("patches.json", "caption.json", "permute.json", "caption_synth28.json")}
problems = []
def check(condition, message):
    if not condition:
        problems.append(message)

cuts = docs["patches.json"]["cuts"]
check([(c["side"], c["patch"], c["tokens"]) for c in cuts] ==
      [(8, 2, 16), (8, 4, 4), (28, 4, 49), (28, 7, 16), (28, 14, 4)], "patches: the cuts")
check(docs["patches.json"]["two_images"]["moved_positions"] == [7, 8, 9, 10], "patches: two images")

caption = docs["caption.json"]
for key in ("patch4", "patch2"):
    run = caption[key]
    check(run["test"]["total"] == 359, f"caption {key}: 359 held-out digits")
    check(sum(map(sum, run["confusion"])) + run["no_digit"] == 359, f"caption {key}: the confusion adds up")
    check(len(run["eval_steps"]) == len(run["held_out_loss"]) >= 1, f"caption {key}: losses")
    check(len(run["examples"]) == 8, f"caption {key}: examples")
check(caption["mlp"]["test"]["total"] == 359, "caption: the MLP on the same 359")
check(len(caption["accuracy"]["value"]) == 3, "caption: three accuracies")

synth = docs["caption_synth28.json"]
check(synth["config"]["side"] == 28 and synth["config"]["patch_sizes"] == [14, 7, 4], "synth28: the lesson's shapes")
check(all(synth[f"patch{p}"]["test"]["total"] == 360 for p in (14, 7, 4)), "synth28: 360 held out")
check((out / "artifacts" / "datasets" / "synth28-180-0" / "manifest.json").exists(), "synth28: manifest")

permute = docs["permute.json"]
check(sorted(permute["config"]["order"]) == list(range(16)), "permute: a permutation of 16 patches")
for key in ("as_is", "scrambled"):
    check(permute[key]["test"]["total"] == 359, f"permute {key}: 359 held-out digits")

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
