#!/usr/bin/env bash
# Runs every module 04 exercise program and the g2c-tokenizer tool in short configurations and
# checks the JSON each program writes (the fields exercises/04-tokenizer/README.md documents).
#   scripts/smoke_04.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/04_pair_counts" "${common[@]}" >/dev/null
"$bin/04_train_the_the" "${common[@]}" >/dev/null
"$bin/04_round_trip" "${common[@]}" --train-chars 5000 --vocab-size 300 >/dev/null
"$bin/04_vocab_compression" "${common[@]}" --sizes 264 300 512 1024 >/dev/null
"$bin/04_inspect_tokens" "${common[@]}" --show 5 >/dev/null
"$bin/04_build_artifact" "${common[@]}" --vocab-size 600 --max-chars 200000 >/dev/null

# The command-line tool: train, info, encode and decode back.
tool="$bin/g2c-tokenizer"
"$tool" train --input "$G2C_DATA_DIR/tinyshakespeare.txt" --vocab-size 400 --max-chars 50000 \
  --out "$out/Tiny" --quiet >/dev/null
"$tool" train --input "$G2C_DATA_DIR/tinyshakespeare.txt" --vocab-size 400 --max-chars 50000 \
  --out "$out/Tiny" --check >/dev/null
"$tool" info "$out/Tiny" --json >"$out/info.txt"
ids="$("$tool" encode "$out/Tiny" --text "To be, or not to be: that is the question.")"
# shellcheck disable=SC2086
text="$("$tool" decode "$out/Tiny" --ids $ids)"
[[ "$text" == "To be, or not to be: that is the question." ]] ||
  { echo "g2c-tokenizer round trip gave: $text"; exit 1; }

"$python" - "$out" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
expected = {
    "pair_counts.json": ["pair_counts", "most_frequent", "overlap", "text_pairs"],
    "train_the_the.json": ["merges", "sequence_length", "final_vocab_size"],
    "round_trip.json": ["cases", "failures", "partial_utf8"],
    "vocab_compression.json": ["table", "train_chars", "held_out_chars"],
    "inspect_tokens.json": ["early_merges", "late_merges", "token_length", "most_frequent"],
    "build_artifact.json": ["artifact_dir", "manifest", "progress"],
}
for name, fields in expected.items():
    doc = json.loads((out / name).read_text())
    for field in ["program", "config", "device", "seed", "figures"] + fields:
        assert field in doc, f"{name}: missing {field}"
assert json.loads((out / "round_trip.json").read_text())["failures"] == 0, "round trip failed"
overlap = json.loads((out / "pair_counts.json").read_text())["overlap"]
assert overlap["merge_result"] == [99, 1], overlap
merges = json.loads((out / "train_the_the.json").read_text())["merges"]
assert [m["token"] for m in merges] == ["th", "the", "the ", "the the ", "the the the"], merges
table = json.loads((out / "vocab_compression.json").read_text())["table"]
assert table["train_chars_per_token"][0] == 1.0 and table["train_chars_per_token"] == sorted(table["train_chars_per_token"])
manifest = json.loads((out / "ShakespeareTokenizer" / "manifest.json").read_text())
assert manifest["actual_vocab_size"] == 600 and manifest["kind"] == "bpe-tokenizer-artifact"
print("ok 04 results")
PY
if [[ -x "$ROOT/.venv/bin/python" && -f "$ROOT/scripts/plot.py" ]]; then
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/*.json >/dev/null 2>&1 || true
  echo "ok plots"
fi
