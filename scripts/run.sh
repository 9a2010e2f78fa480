#!/usr/bin/env bash
# Sets up whatever is missing, builds one exercise program and runs it.
#   scripts/run.sh [--student] <program> [program options...]
#   scripts/run.sh 07_strip_mask              the course's main experiment, on the reference solutions
#   scripts/run.sh --student 03_classifier    the same on your own code (build/student)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
preset=reference
if [[ "${1:-}" == "--student" ]]; then
  preset=student
  shift
fi
if [[ $# -lt 1 ]]; then
  echo "usage: scripts/run.sh [--student] <program> [options...]; programs are the files in build/<preset>/bin/" >&2
  exit 2
fi
program="$1"
shift
G2C_SETUP_QUIET=1 scripts/setup.sh
export PATH="$ROOT/.venv/bin:$PATH"
cmake --build --preset "$preset" --target "$program"
exec "build/$preset/bin/$program" "$@"
