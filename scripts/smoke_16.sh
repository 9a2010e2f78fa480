#!/usr/bin/env bash
# Runs module 16's exercises in short configurations on SmolLM2-135M-Instruct and checks their
# result files against exercises/16-inference/README.md: the packed weights a fifth of the float32
# ones with the same greedy tokens, the exercise's forward reproducing the model, multi-head
# attention computing the same function with three times the cache, the cache holding the
# formula's bytes, SmolLM2 answering the same through g2c-serve as in the process; and g2c-generate
# on the real model.
#   scripts/smoke_16.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

needs_smollm2 smoke_16
"$bin/16_quantization" "${common[@]}" --tokens 8 --repeats 1 >/dev/null
"$bin/16_modern_pieces" "${common[@]}" --threads 2 --text-tokens 32 --answer-tokens 3 >/dev/null
"$bin/16_kv_cache" "${common[@]}" --threads 2 --positions 256 --round 64 >/dev/null
"$bin/16_serve" "${common[@]}" --tokens 8 --repeats 1 --clients 2 >/dev/null
"$bin/g2c-generate" --model SmolLM2-135M-Instruct --prompt "The sea" --temperature 0 --tokens 6 \
  --threads 2 --json "$out/generate.json" >/dev/null 2>&1

"$python" - "$out" <<'PY'
import json, os, sys

out = sys.argv[1]
load = lambda name: json.load(open(os.path.join(out, name)))
problems = []
check = lambda ok, what: ok or problems.append(what)

q = load("quantization.json")
packed, dense = q["weights"]["packed"], q["weights"]["float32"]
check(abs(dense["weight_mb"] - 538.06) < 0.1, f"float32 weights {dense['weight_mb']} MB")
check(packed["weight_mb"] < dense["weight_mb"] / 5, f"packed weights {packed['weight_mb']} MB")
check(q["logit_error"]["same_greedy_tokens"], "packed and float32 greedy tokens differ")
check(q["logit_error"]["steps_max_abs"] < 1e-3, f"step logits {q['logit_error']['steps_max_abs']}")
check(all(w["tokens_per_s"] > 0 and w["first_token_seconds"] > 0 for w in (packed, dense)),
      "speeds")
check(len(q["figures"]) == 2, "quantization figures")

m = load("modern_pieces.json")
variants = {v["variant"]: v for v in m["variants"]}
check(m["forward_check_max_abs"] < 1e-3, f"forward check {m['forward_check_max_abs']}")
check(list(variants) == ["smollm2", "layer_norm", "gelu_mlp", "gelu_gate", "no_rotary",
                         "multi_head"], f"variants {list(variants)}")
check(variants["smollm2"]["mean_kl"] < 1e-9, "the model against itself")
check(variants["multi_head"]["mean_kl"] < 1e-6, "multi-head should compute the same function")
check(variants["multi_head"]["kv_cache_bytes_per_position"] ==
      3 * variants["smollm2"]["kv_cache_bytes_per_position"], "multi-head cache size")
check(variants["gelu_mlp"]["mean_kl"] > variants["layer_norm"]["mean_kl"],
      "dropping the gate should move the model more than LayerNorm")

k = load("kv_cache.json")
check(k["bytes_per_position"] == 46080, f"bytes a position {k['bytes_per_position']}")
check(k["positions_filled"] == [64, 128, 192, 256], f"positions {k['positions_filled']}")
check(all(abs(a - b) < 1e-9 for a, b in zip(k["cache_tensor_mib"], k["formula_mib"])),
      "the cache's tensors against the formula")
check(all(t > 0 for t in k["decode_step_ms"]), "step times")

s = load("serve.json")
rows = {b["backend"]: b for b in s["backends"]}
check(rows["SmolLM2-135M-Instruct in-process"]["tokens"] ==
      rows["SmolLM2-135M-Instruct via g2c-serve"]["tokens"], "serve: token counts differ")
check(0 <= s["http_wire_ms_per_completion"] < 50, f"serve: hop {s['http_wire_ms_per_completion']}")
check(s["streaming"]["clients"] == 2 and s["streaming"]["tokens_per_second"] > 0, "serve: clients")
check(len(s["figures"]) == 2, "serve figures")

g = load("generate.json")
check(g["model"] == "SmolLM2-135M-Instruct" and g["weights"] == "packed", "generate: model")
check(g["new_tokens"] > 0 and g["packed"]["tokens_per_s"] > 0, "generate: speed")
check(g["float32"]["same_tokens"], "generate: packed and float32 tokens differ")

for problem in problems:
    print(f"smoke_16: {problem}")
print(f"smoke_16: quantization, modern pieces, KV cache, serve and g2c-generate checked; "
      f"{len(problems)} problems")
sys.exit(1 if problems else 0)
PY
