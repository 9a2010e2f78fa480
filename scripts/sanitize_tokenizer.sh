#!/usr/bin/env bash
# The tokenizer tests (course and framework) under AddressSanitizer + UndefinedBehaviorSanitizer:
# configures and builds the `sanitize` preset (no LibTorch) and runs its tokenizer tests.
#   scripts/sanitize_tokenizer.sh
# The last line reads "tests: N passed, M failed, K skipped".
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[[ -x "$ROOT/.venv/bin/cmake" ]] && export PATH="$ROOT/.venv/bin:$PATH"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

cmake --preset sanitize >/dev/null || { echo "tests: 0 passed, 1 failed, 0 skipped (configure failed)"; exit 1; }
cmake --build --preset sanitize --target test_tokenizer test_tokenizer_framework ||
  { echo "tests: 0 passed, 1 failed, 0 skipped (build failed)"; exit 1; }
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
ctest --preset sanitize -L tokenizer -j2 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

summary="$(grep -E 'tests passed' "$log" | tail -n 1)"
total=0
failed=1
if [[ "$summary" =~ ([0-9]+)\ tests\ failed\ out\ of\ ([0-9]+) ]]; then
  failed=${BASH_REMATCH[1]}
  total=${BASH_REMATCH[2]}
elif [[ "$summary" =~ tests\ passed\ out\ of\ ([0-9]+) ]]; then
  failed=0
  total=${BASH_REMATCH[1]}
fi
skipped=$(grep -cE 'Not Run|\*\*\*Skipped' "$log" || true)
echo "tests: $((total - failed - skipped)) passed, ${failed} failed, ${skipped} skipped"
exit "$status"
