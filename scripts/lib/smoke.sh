# What every smoke script starts with; sourced as `source scripts/lib/smoke.sh [build dir]`.
# Sets ROOT, build (default build/reference), bin, a temporary out folder removed on exit, python
# (the project's, else the system's), the data folder, and `common`: the options every run takes.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:-$ROOT/build/reference}" && pwd)"
bin="$build/bin"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
export G2C_DATA_DIR="${G2C_DATA_DIR:-$ROOT/data}"
python="$ROOT/.venv/bin/python"
[[ -x "$python" ]] || python=python3
common=(--out "$out" --quiet --no-plot)
