#!/usr/bin/env bash
# Grades a build's course tests: a per-module table, JUnit XML and an autograder results.json in the
# Gradescope format.
#
#   scripts/grade.sh [--count-scaffold] [build dir] [output dir]
#                                         defaults: build/student, <build dir>/grade
#
# One point per course test that a student's code turns green. The tests that already pass on the
# untouched day-one scaffold (label "clean": they check provided code, or that a stub exists) are
# shown in a column of their own and score nothing; --count-scaffold scores them too (one point
# per course test). Works on a partially completed build: TODOs simply count as failed tests.
# Tests that cannot run on this machine (no CUDA, no MPS) are listed with zero points and left out
# of the total.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
grade_flags=()
if [[ "${1:-}" == "--count-scaffold" ]]; then
  grade_flags=(--count-scaffold)
  shift
fi
build="${1:-build/student}"
out="${2:-$build/grade}"
[[ -d .venv/bin ]] && export PATH="$ROOT/.venv/bin:$PATH"
if [[ ! -f "$build/CTestTestfile.cmake" ]]; then
  echo "grade: $build is not a configured build. Run scripts/setup.sh, then cmake --build --preset student." >&2
  exit 2
fi
cmake --build "$build" >/dev/null || { echo "grade: the build failed; fix the compile errors first (cmake --build $build)" >&2; exit 2; }
mkdir -p "$out"
jobs="$(nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)"
python3 scripts/course_results.py run "$build" "$out/junit.xml" -L course -j "$((jobs * 2))" >"$out/ctest.log" 2>&1 || true
python3 scripts/course_results.py grade "$build" "$out/junit.xml" "$out" "${grade_flags[@]}"
