#!/usr/bin/env bash
# Runs 00_check_setup briefly and checks its verdict both ways: "ready" and exit status 0 on this
# machine (setup has run), "not ready" naming the corpus with its fix and exit status 2 when the
# corpus folder points nowhere.
#   scripts/smoke_00.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

problems=0
"$bin/00_check_setup" --seconds 0.1 --size 64 >"$out/ready.txt" 2>&1 || {
  echo "00_check_setup: exit status $? on a machine that setup has prepared"
  problems=$((problems + 1))
}
grep -q '^ready: ' "$out/ready.txt" || { echo "00_check_setup: no 'ready:' line"; problems=$((problems + 1)); }
grep -qE '^  cpu +64×64 float32 matmul: [0-9.]+ GFLOP/s' "$out/ready.txt" ||
  { echo "00_check_setup: no CPU matmul rate"; problems=$((problems + 1)); }
status=0
G2C_DATA_DIR="$out/nowhere" "$bin/00_check_setup" --seconds 0.1 --size 64 >/dev/null 2>"$out/missing.txt" || status=$?
[[ $status -eq 2 ]] || { echo "00_check_setup without the corpus: exit status $status, not 2"; problems=$((problems + 1)); }
grep -q 'the TinyShakespeare corpus: .*scripts/setup.sh' "$out/missing.txt" ||
  { echo "00_check_setup without the corpus: no line naming it and its fix"; problems=$((problems + 1)); }
if ((problems)); then
  cat "$out/ready.txt" "$out/missing.txt"
  echo "checks: 0 passed, 1 failed, 0 skipped"
  exit 1
fi
echo "ok 00_check_setup"
echo "checks: 1 passed, 0 failed, 0 skipped"
