#!/usr/bin/env bash
# Runs the tokenizer's libFuzzer targets for a bounded time each (preset `fuzz`: clang-14 with
# AddressSanitizer + UndefinedBehaviorSanitizer, no LibTorch; needs the Debian packages clang-14
# and libclang-rt-14-dev).
#   scripts/fuzz_tokenizer.sh [seconds per target, default 60]
# fuzz_tokenizer_round_trip: train/encode/decode invariants (fast == reference, lossless).
# fuzz_tokenizer_load:       tokenizer.json and ids.uint32 loaders on arbitrary bytes.
# The corpora grow in build/fuzz/corpus/<target>/ (seeded from g2c/tokenizer/fuzz/seeds/); a crash
# leaves its input as build/fuzz/crash-* and fails the script.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
[[ -x "$ROOT/.venv/bin/cmake" ]] && export PATH="$ROOT/.venv/bin:$PATH"
seconds="${1:-60}"
command -v clang++-14 >/dev/null || { echo "fuzz: clang++-14 not found (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 2; }

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target fuzz_tokenizer_round_trip fuzz_tokenizer_load
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
for target in fuzz_tokenizer_round_trip fuzz_tokenizer_load; do
  corpus="build/fuzz/corpus/$target"
  mkdir -p "$corpus"
  echo "fuzz: $target for ${seconds}s"
  (cd build/fuzz && "bin/$target" -max_total_time="$seconds" -max_len=4096 -timeout=20 \
    -rss_limit_mb=2048 -print_final_stats=1 "corpus/$target" "$ROOT/g2c/tokenizer/fuzz/seeds/$target" \
    2>"$target.log") || { tail -n 40 "build/fuzz/$target.log"; echo "fuzz: $target FAILED"; exit 1; }
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "build/fuzz/$target.log")
  echo "fuzz: $target ok, ${runs:-?} inputs, corpus of $(ls "$corpus" | wc -l) files"
done
