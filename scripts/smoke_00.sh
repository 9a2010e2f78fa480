#!/usr/bin/env bash
# Runs 00_check_setup briefly and checks its verdict both ways: "ready" and exit status 0 on this
# machine (setup has run), "not ready" naming the corpus with its fix and exit status 2 when the
# corpus folder points nowhere. Then runs 00_shape_trace and checks the answers it writes against
# exercises/00-prerequisites/README.md (shapes, strides, the matmul, the gradients, softmax + NLL).
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
else
  echo "ok 00_check_setup"
fi

trace_ok=1
"$bin/00_shape_trace" "${common[@]}" --threads 1 >"$out/trace.txt" 2>&1 || {
  cat "$out/trace.txt"
  trace_ok=0
}
if ((trace_ok)); then
  "$python" - "$out/shape_trace.json" <<'PY' || trace_ok=0
import json, math, sys

r = json.load(open(sys.argv[1]))
problems = []
check = lambda ok, what: ok or problems.append(what)
close = lambda a, b, tol=1e-6: abs(a - b) <= tol
shapes = {s["name"]: s["shape"] for s in r["shapes"]}
check(shapes.get("table[ids]") == [4, 8, 16], f"part 1: lookup shape {shapes.get('table[ids]')}")
check(shapes.get("logits = table[ids] @ projection") == [4, 8, 1000], "part 1: logits shape")
check(r["storage"]["strides_2x3"] == [3, 1] and r["storage"]["strides_transpose"] == [1, 3],
      "part 2: strides of the 2x3 and its transpose")
check(r["storage"]["strides_4x8x16"] == [128, 16, 1] and r["storage"]["offset_1_2_3"] == 163,
      "part 2: (4, 8, 16) strides and the offset of [1][2][3]")
check(r["matmul"]["by_hand"] == [[220, 280], [490, 640]] == r["matmul"]["torch"], "part 3: A @ B")
chain = r["chain_rule"]
check(close(chain["loss"], (2 * math.tanh(0.5) + 0.5 - 1) ** 2), "part 4: the loss")
for name, value in chain["by_hand"].items():
    check(close(value, chain["autograd"][name], 1e-9), f"part 4: dL/d{name} by hand vs autograd")
check(close(chain["by_hand"]["w1"], 1.334552, 1e-6), "part 4: dL/dw1")
soft = r["softmax"]
check(all(close(a, b, 1e-6) for a, b in zip(soft["probabilities"], [0.665241, 0.244728, 0.090031])),
      "part 5: softmax of [2, 1, 0]")
check(close(soft["nll"], 0.407606, 1e-6), "part 5: NLL")
mlp = {s["name"]: s["shape"] for s in r["mlp"]["shapes"]}
check(mlp.get("logits = h @ W2 + b2") == [4, 3] and mlp.get("loss = mean NLL") == [],
      "part 6: logits (4, 3) and a scalar loss")
check(mlp.get("W1.grad") == [3, 5] and mlp.get("W2.grad") == [5, 3], "part 6: gradient shapes")
row = r["mlp"]["row0"]
check(close(sum(row["probabilities"]), 1, 1e-9) and close(row["nll"], row["libtorch_nll"], 1e-5),
      "part 6: row 0 by hand vs LibTorch")
if problems:
    print("\n".join(problems))
    sys.exit(1)
PY
fi
if ((trace_ok)); then echo "ok 00_shape_trace"; else problems=$((problems + 1)); fi
if ((problems)); then
  echo "checks: 0 passed, 1 failed, 0 skipped"
  exit 1
fi
echo "checks: 1 passed, 0 failed, 0 skipped"
