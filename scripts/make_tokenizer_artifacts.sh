#!/usr/bin/env bash
# Builds the course's tokenizer artifact with the g2c-tokenizer tool of a build folder:
#   artifacts/tokenizers/ShakespeareTokenizer/  (vocab 4096, the course special tokens, the first
#   1,000,000 characters of TinyShakespeare; tokenizer.json + ids.uint32 + manifest.json)
#
#   scripts/make_tokenizer_artifacts.sh build/reference           build it (a no-op when current)
#   scripts/make_tokenizer_artifacts.sh build/reference --check   exit 0 if current, 1 if not
#   scripts/make_tokenizer_artifacts.sh build/reference --force   rebuild even when current
#
# The corpus is $G2C_DATA_DIR/tinyshakespeare.txt, else data/tinyshakespeare.txt (scripts/setup.sh
# fetches it). The artifact goes under $G2C_ARTIFACTS_DIR when set, else artifacts/. "Current"
# means the manifest records the same vocab size, special tokens, character limit and a matching
# fingerprint of the training text. The tool's fast trainer gives exactly the reference merges.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() { echo "usage: $0 <build-dir> [--check|--force]" >&2; exit 2; }
[[ $# -ge 1 ]] || usage
build="$1"
mode="${2:-build}"
case "$mode" in build | --check | --force) ;; *) usage ;; esac

corpus="${G2C_DATA_DIR:-$ROOT/data}/tinyshakespeare.txt"
artifacts="${G2C_ARTIFACTS_DIR:-$ROOT/artifacts}"
out="$artifacts/tokenizers/ShakespeareTokenizer"
tool="$build/bin/g2c-tokenizer"

if [[ ! -f "$corpus" ]]; then
  echo "make_tokenizer_artifacts: $corpus not found. Run scripts/setup.sh (or set G2C_DATA_DIR to a folder holding tinyshakespeare.txt)." >&2
  exit 2
fi
if [[ ! -x "$tool" ]]; then
  if [[ "$mode" == --check ]]; then
    echo "make_tokenizer_artifacts: $tool is not built, cannot check" >&2
    exit 1
  fi
  [[ -f "$build/CMakeCache.txt" ]] || { echo "make_tokenizer_artifacts: $build is not a configured build folder (try: cmake --preset reference)" >&2; exit 2; }
  echo "make_tokenizer_artifacts: building g2c-tokenizer in $build"
  cmake --build "$build" --target g2c-tokenizer >/dev/null
fi

args=(train --input "$corpus" --vocab-size 4096 --max-chars 1000000 --out "$out"
  --name ShakespeareTokenizer --quiet)
case "$mode" in
  --check) exec "$tool" "${args[@]}" --check ;;
  --force) exec "$tool" "${args[@]}" ;;
  *) exec "$tool" "${args[@]}" --if-changed ;;
esac
