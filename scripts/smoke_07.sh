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

"$python" "$ROOT/scripts/validate_07_results.py" "$out"
"$ROOT/scripts/check_visualize_html.sh" "$out/attention.html"
if [[ -x "$ROOT/.venv/bin/python" ]]; then
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/*.json >/dev/null
  echo "ok plots"
fi
