#!/usr/bin/env bash
# Every hint ladder's code step, pasted as written in place of its function's TODO in a scratch
# copy of the student tree, compiles and passes the course tests: a hint cannot rot.
#   scripts/check_hint_code.sh [scratch folder]     (default build/hint-check)
# The scratch build shares the compiler cache with the real ones (ccache keys paths relative to the
# source folder), so only the pasted student files compile anew.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
scratch="$(realpath -m "${1:-$root/build/hint-check}")"
python="$root/.venv/bin/python"
[[ -x "$python" ]] || python=python3

rm -rf "$scratch/src"
mkdir -p "$scratch/src"
# The tracked and new files as they are now (an edit not yet committed is checked too).
(cd "$root" && git ls-files -co --exclude-standard -z |
  while IFS= read -r -d '' file; do [[ -e "$file" ]] && printf '%s\0' "$file"; done |
  xargs -0 cp --parents -t "$scratch/src")
ln -s "$(readlink -f "$root/.venv")" "$scratch/src/.venv"
"$python" "$root/scripts/hints.py" apply "$scratch/src"

cd "$scratch/src"
cmake --preset student -DG2C_BUILD_EXERCISES=OFF >"$scratch/configure.log"
# The course tests' programs only: the checks (test_*_framework) are not what the ladders answer to.
mapfile -t targets < <(cmake --build --preset student --target help | sed -n 's/^\(test_[a-z_]*\):.*/\1/p' |
  grep -v '_framework$')
cmake --build --preset student --target "${targets[@]}"
"$python" scripts/course_results.py run build/student "$scratch/course.xml" -L course -j2 \
  >"$scratch/ctest.log" 2>&1 || true
"$python" scripts/course_results.py all-pass build/student "$scratch/course.xml" --label course
