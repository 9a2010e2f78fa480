#!/usr/bin/env bash
# Runs every module 05 exercise program in a short configuration (GloVe analogies on a tiny
# hand-written vector file) and checks the JSON each one writes: the fields documented in
# exercises/05-embeddings/README.md, and the facts the exercises demonstrate.
#   scripts/smoke_05.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/05_token_lookups" "${common[@]}" >/dev/null
"$bin/05_sinusoidal_table" "${common[@]}" --max-seq-len 32 --dim 16 >/dev/null
"$bin/05_rope_tables" "${common[@]}" --max-seq-len 32 --dim 16 >/dev/null
"$bin/05_rope_relative" "${common[@]}" --max-seq-len 48 --dim 16 --max-offset 6 --trials 5 >/dev/null
"$bin/05_bag_of_tokens" "${common[@]}" >/dev/null
"$bin/05_skipgram" "${common[@]}" --chars 30000 --steps 40 --log-every 20 --batch 64 >/dev/null
# Without --glove the program explains where to get the vectors and records that it skipped.
"$bin/05_glove_analogies" "${common[@]}" >/dev/null
mv "$out/glove_analogies.json" "$out/glove_skipped.json"
cat >"$out/glove.txt" <<'VECTORS'
the 0.9 0.1 0.1 0.1
king 1.0 1.0 0.0 0.1
man 1.0 0.0 0.0 0.1
woman 0.0 0.0 1.0 0.1
queen 0.0 1.0 1.0 0.1
apple 0.2 0.1 0.1 1.0
VECTORS
"$bin/05_glove_analogies" "${common[@]}" --glove "$out/glove.txt" --analogies king:man:woman \
  --top-k 2 >/dev/null

"$python" - "$out" <<'PY'
import json, math, pathlib, sys
out = pathlib.Path(sys.argv[1])
common = ["program", "config", "device", "seed", "torch_version", "created"]
expected = {
    "token_lookups.json": ["weight", "lookups", "rows_match", "shapes", "gradient_uses", "figures"],
    "sinusoidal_table.json": ["table", "row_similarity", "positions", "columns", "figures"],
    "rope_tables.json": ["cos", "sin", "halves_match", "pairs", "figures"],
    "rope_relative.json": ["offsets", "rope_spread", "added_spread", "rope_score_by_offset",
                           "summary", "figures"],
    "bag_of_tokens.json": ["methods", "distances", "summary_norm", "same_without_positions",
                           "figures"],
    "skipgram.json": ["tokenizer", "tokens", "pairs", "losses", "timings", "neighbours", "figures"],
    "glove_skipped.json": ["skipped", "how_to"],
    "glove_analogies.json": ["skipped", "vectors", "dim", "timings", "analogies_result", "best",
                             "figures"],
}
problems = []
docs = {}
for name, keys in expected.items():
    path = out / name
    if not path.exists():
        problems.append(f"{name}: missing")
        continue
    doc = docs[name] = json.loads(path.read_text())
    for key in common + keys:
        if key not in doc:
            problems.append(f"{name}: no {key!r}")

def check(condition, message):
    if not condition:
        problems.append(message)

if not problems:
    d = docs["token_lookups.json"]
    check(d["rows_match"], "token_lookups: rows differ from the table")
    check(d["gradient_uses"]["uses"][3] == 2.0, "token_lookups: id 3 is used twice")
    d = docs["sinusoidal_table.json"]
    check(len(d["table"]) == 32 and len(d["table"][0]) == 16, "sinusoidal_table: shape")
    check(abs(d["table"][1][0] - math.sin(1.0)) < 1e-5, "sinusoidal_table: PE[1, 0] != sin 1")
    d = docs["rope_tables.json"]
    check(d["halves_match"], "rope_tables: halves differ")
    check(abs(d["pairs"]["theta"][0] - 1.0) < 1e-5, "rope_tables: theta_0 != 1")
    d = docs["rope_relative.json"]
    check(d["summary"]["rope_max_spread"] < 1e-3, "rope_relative: RoPE scores move with position")
    check(d["summary"]["added_max_spread"] > 1e-2, "rope_relative: added positions do not move")
    d = docs["bag_of_tokens.json"]
    check(d["same_without_positions"] and d["distances"][0] < 1e-6, "bag_of_tokens: bags differ")
    check(min(d["distances"][1:]) > 1e-3, "bag_of_tokens: positions do not separate the sentences")
    d = docs["skipgram.json"]
    check(len(d["losses"]) == 40 and all(math.isfinite(x) for x in d["losses"]), "skipgram: losses")
    check(d["pairs"] > 0 and d["neighbours"], "skipgram: no pairs or no neighbours")
    check(docs["glove_skipped.json"]["skipped"] is True, "glove: should have skipped")
    d = docs["glove_analogies.json"]
    check(d["skipped"] is False and d["vectors"] == 6 and d["dim"] == 4, "glove: vectors")
    check(d["analogies_result"][0]["answers"][0]["word"] == "queen", "glove: king - man + woman")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"ok {len(docs)} result files")
PY
if [[ -x "$ROOT/.venv/bin/python" ]]; then
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/*.json >/dev/null
  echo "ok plots"
fi
