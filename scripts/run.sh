#!/usr/bin/env bash
# Sets up whatever is missing, builds one program (an exercise or a tool) and runs it. Programs are
# not part of the default build: each compiles the first time it runs.
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
  echo "usage: scripts/run.sh [--student] <program> [options...]; a program is an exercise" \
    "(07_strip_mask, 10_pretrain, ...) or a tool (g2c-generate, g2c-chat, g2c-tokenizer)" >&2
  exit 2
fi
program="$1"
shift
# Setup and the build report on stderr: stdout is the program's alone (`... > samples.txt`).
G2C_SETUP_QUIET=1 scripts/setup.sh >&2
export PATH="$ROOT/.venv/bin:$PATH"
if ! cmake --build --preset "$preset" --target "$program" >&2; then
  echo "run.sh: could not build '$program' in build/$preset (above: a compile error, or no such" \
    "program; the list: cmake --build --preset $preset --target help | grep -E '^([0-9]|g2c-)')" >&2
  exit 2
fi
exec "build/$preset/bin/$program" "$@"
