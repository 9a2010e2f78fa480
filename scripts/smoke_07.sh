#!/usr/bin/env bash
# Runs every module 07 exercise program in a short configuration and validates the JSON each one
# writes against the schema documented in exercises/07-attention/README.md.
#   scripts/smoke_07.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/07_hand_compute" "${common[@]}" >/dev/null
"$bin/07_param_counts" "${common[@]}" --dims 64 128 --lengths 16 64 >/dev/null
"$bin/07_quadratic_cost" "${common[@]}" --lengths 64 128 256 --repeats 1 --fit-from 64 >/dev/null
"$bin/07_strip_mask" "${common[@]}" --data random --steps 60 --log-every 20 >/dev/null
"$bin/07_strip_mask" "${common[@]}" --steps 30 --log-every 10 --context 32 --sample-tokens 20 >/dev/null
"$bin/07_visualize" "${common[@]}" --steps 5 --batch 8 >/dev/null
# The main job's path: fast by default where modules 03 and 03b are the reference's, lesson where
# they are the student's; --path lesson on request.
"$bin/07_strip_mask" --out "$out/lesson" --quiet --no-plot --data random --steps 20 \
  --log-every 10 --sample-tokens 4 --path lesson >/dev/null
"$python" - "$out" "$build/course_map.txt" <<'PY'
import json, sys
out, course_map = sys.argv[1], sys.argv[2]
reference_03 = all(line.split()[3] == "solution" for line in open(course_map)
                   if not line.startswith("#") and line.split()[0] in ("03", "03b"))
default = json.load(open(f"{out}/strip_mask_random.json"))["config"]
lesson = json.load(open(f"{out}/lesson/strip_mask_random.json"))["config"]
expected = "fast" if reference_03 else "lesson"
problems = []
if default["path"] != expected or default["fused_kernels"] != (expected == "fast"):
    problems.append(f"default path {default['path']!r}, expected {expected!r} in this build")
if lesson["path"] != "lesson" or lesson["fused_kernels"]:
    problems.append(f"--path lesson ran {lesson['path']!r}")
if problems:
    sys.exit("07_strip_mask --path: " + "; ".join(problems))
print(f"ok 07_strip_mask runs {expected} by default here and lesson on request")
PY

"$python" "$ROOT/scripts/validate_07_results.py" "$out"
"$ROOT/scripts/check_visualize_html.sh" "$out/attention.html"
if [[ -x "$ROOT/.venv/bin/python" ]]; then
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/*.json >/dev/null
  echo "ok plots"
fi
