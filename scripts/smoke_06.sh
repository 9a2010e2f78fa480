#!/usr/bin/env bash
# Runs the module 06 exercise in a short configuration and checks the JSON it writes against the
# schema in exercises/06-language-models/README.md, and the facts it demonstrates (perplexities
# between 1 and the vocabulary size, samples continuing their prompt).
#   scripts/smoke_06.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/06_language_models" "${common[@]}" --steps 40 --log-every 20 \
  --sample-tokens 30 --hidden 64 --bpe-vocab 512 >/dev/null

"$python" - "$out/language_models.json" <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
problems = []
def check(condition, message):
    if not condition:
        problems.append(message)
for key in ["program", "config", "device", "seed", "torch_version", "created", "tokenizers",
            "figures"]:
    check(key in doc, f"no {key!r}")
levels = doc.get("tokenizers", {})
check("char" in levels, "no character-level run")
for level, run in levels.items():
    vocab = run["vocab_size"]
    for key in ["description", "vocab_size", "train_tokens", "val_tokens", "models"]:
        check(key in run, f"{level}: no {key!r}")
    counts = run["models"]["counts_bigram"]
    check(1.0 <= counts["val_perplexity"] <= vocab, f"{level}: counts perplexity out of [1, V]")
    for name in ["neural_bigram", "mlp"]:
        model = run["models"][name]
        for key in ["steps", "train_loss", "val_perplexity", "final_val_perplexity", "parameters",
                    "wall_seconds", "train_seconds", "tokens_per_second", "predictions_per_second",
                    "sample"]:
            check(key in model, f"{level}/{name}: no {key!r}")
        check(model["steps"] == [0, 20, 39], f"{level}/{name}: logged steps {model['steps']}")
        check(len(model["train_loss"]) == len(model["val_perplexity"]) == 3,
              f"{level}/{name}: series lengths")
        check(all(math.isfinite(x) and x >= 1.0 for x in model["val_perplexity"]),
              f"{level}/{name}: perplexity below 1 or not finite")
        check(model["tokens_per_second"] > 0, f"{level}/{name}: tokens/s")
        check(isinstance(model["sample"], str) and model["sample"], f"{level}/{name}: no sample")
check(len(doc.get("figures", [])) == len(levels), "one figure per token level")
if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"ok language_models.json ({', '.join(levels)})")
PY
if [[ -x "$ROOT/.venv/bin/python" ]]; then
  "$ROOT/.venv/bin/python" "$ROOT/scripts/plot.py" "$out"/*.json >/dev/null
  echo "ok plots"
fi
