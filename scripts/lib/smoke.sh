# What every smoke script starts with; sourced as `source scripts/lib/smoke.sh [build dir]`.
# Sets ROOT, build (default build/reference), bin, a temporary out folder removed on exit (copied
# first to $G2C_SMOKE_KEEP when that is set, to compare two builds' results), python
# (the project's, else the system's), the data folder, and `common`: the options every run takes.
# Programs are built on demand (cmake/G2CCourse.cmake), so it first brings them up to date, unless
# G2C_PROGRAMS_BUILT=1 says they just were (scripts/test.sh, which runs smoke scripts side by side
# and keeps two builds of one folder from running at once).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:-$ROOT/build/reference}" && pwd)"
bin="$build/bin"
[[ -x "$ROOT/.venv/bin/cmake" ]] && export PATH="$ROOT/.venv/bin:$PATH"
if [[ "${G2C_PROGRAMS_BUILT:-0}" != 1 ]]; then
  cmake --build "$build" --target programs >/dev/null ||
    { echo "smoke: building the programs of $build failed (cmake --build $build --target programs)"; exit 1; }
fi
out="$(mktemp -d)"
keep_results() {
  if [[ -n "${G2C_SMOKE_KEEP:-}" ]]; then mkdir -p "$G2C_SMOKE_KEEP" && cp -r "$out"/. "$G2C_SMOKE_KEEP"/; fi
  rm -rf "$out"
}
trap keep_results EXIT
export G2C_DATA_DIR="${G2C_DATA_DIR:-$ROOT/data}"
python="$ROOT/.venv/bin/python"
[[ -x "$python" ]] || python=python3
common=(--out "$out" --quiet --no-plot)
# The result checks' shared Python (scripts/lib/smoke_checks.py).
export PYTHONPATH="$ROOT/scripts/lib${PYTHONPATH:+:$PYTHONPATH}"

# Ends the calling smoke script with a note, successfully, when SmolLM2-135M-Instruct's file is
# not on this machine (scripts/setup.sh fetches it; $G2C_SMOLLM2_GGUF points at a copy).
#   needs_smollm2 smoke_18
needs_smollm2() {
  local model_file="${G2C_SMOLLM2_GGUF:-$ROOT/artifacts/pretrained/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf}"
  if [[ ! -f "$model_file" ]]; then
    echo "$1: skipped, $model_file is missing (scripts/setup.sh fetches it)"
    exit 0
  fi
}
