#!/usr/bin/env bash
# Runs the module 08 heads exercise in a short configuration and checks the JSON it writes against
# exercises/08-multi-head-attention/README.md: one run per head count, one entropy and one (T, T)
# weight matrix per head, rows summing to 1, causal (nothing above the diagonal). Then the padding
# exercise (no training, no data): no weight on padding keys with the mask, each sentence's output
# equal to the sentence alone, zero output where the padding queries are blocked too.
#   scripts/smoke_08.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

"$bin/08_heads" "${common[@]}" --steps 12 --log-every 4 --heads 1 4 --context 16 >/dev/null

"$python" - "$out/heads.json" <<'PY'
import json, math, sys

doc = json.load(open(sys.argv[1]))
problems = []
check = lambda ok, what: ok or problems.append(what)
for key in ["program", "device", "seed", "config", "probe_tokens", "runs", "figures"]:
    check(key in doc, f"no {key!r}")
runs = doc.get("runs", [])
check([run.get("num_heads") for run in runs] == [1, 4], "one run per head count, in order")
T = len(doc.get("probe_tokens", []))
for run in runs:
    heads = run["num_heads"]
    label = f"H = {heads}"
    check(run["head_dim"] * heads == doc["config"]["embedding_dim"], f"{label}: head_dim x H != D")
    check(run["steps"] == [0, 4, 8, 11], f"{label}: logged steps {run['steps']}")
    check(len(run["train_loss"]) == len(run["steps"]), f"{label}: one loss per logged step")
    check(all(math.isfinite(x) for x in run["train_loss"]), f"{label}: loss not finite")
    check(len(run["head_entropy"]) == heads and len(run["weights"]) == heads,
          f"{label}: one entropy and one matrix per head")
    for matrix in run["weights"]:
        check(len(matrix) == T and all(len(row) == T for row in matrix), f"{label}: weights not TxT")
        check(all(abs(sum(row) - 1) < 1e-4 for row in matrix), f"{label}: rows do not sum to 1")
        check(all(row[j] < 1e-6 for i, row in enumerate(matrix) for j in range(i + 1, len(row))),
              f"{label}: a token looks ahead")
check(len(doc.get("figures", [])) == len(runs) + 1, "a loss figure and one heatmap figure per run")
if problems:
    print("\n".join(problems))
    print("checks: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)
print("ok heads.json (H = 1, 4)")
print("checks: 1 passed, 0 failed, 0 skipped")
PY
"$python" "$ROOT/scripts/plot.py" "$out/heads.json" >/dev/null && echo "ok plots"

"$bin/08_padding" "${common[@]}" >/dev/null

"$python" - "$out/padding.json" <<'PY'
import json, math, sys

doc = json.load(open(sys.argv[1]))
problems = []
check = lambda ok, what: ok or problems.append(what)
for key in ["program", "device", "seed", "config", "sentences", "figures"]:
    check(key in doc, f"no {key!r}")
T = doc["config"]["seq_len"]
sentences = doc.get("sentences", [])
check(len(sentences) == len(doc["config"]["sentences"]) >= 2, "one entry per sentence")
check(max(s["length"] for s in sentences) == T, "padded to the longest sentence")
for s in sentences:
    n, label = s["length"], repr(s["text"])
    check(len(s["tokens"]) == T, f"{label}: {T} token labels")
    for key, matrix in s["weights"].items():
        check(len(matrix) == T and all(len(row) == T for row in matrix), f"{label} {key}: not TxT")
        check(all(abs(sum(row) - 1) < 1e-4 for row in matrix), f"{label} {key}: rows do not sum to 1")
    for key in ["padding_mask", "causal_and_padding"]:
        check(all(row[j] == 0 for row in s["weights"][key] for j in range(n, T)),
              f"{label} {key}: weight on a padding key")
    causal = s["weights"]["causal_and_padding"]
    check(all(causal[i][j] == 0 for i in range(T) for j in range(i + 1, T)),
          f"{label}: causal_and_padding looks ahead")
    check(s["padding_weight_share"]["padding_mask"] == 0, f"{label}: padding share with the mask")
    check(s["max_diff_vs_alone"]["padding_mask"] < 1e-4, f"{label}: masked output != alone")
    norms = s["padded_output_norm"]
    if n < T:
        check(s["padding_weight_share"]["no_mask"] > 0.01, f"{label}: no weight on padding unmasked")
        check(s["max_diff_vs_alone"]["no_mask"] > 1e-3, f"{label}: padding changed nothing unmasked")
        check(all(math.isfinite(v) for v in norms.values()), f"{label}: norms not finite")
        check(norms["padding_mask_keys_and_queries"] == 0, f"{label}: blocked padding rows not zero")
    else:
        check(all(v is None for v in norms.values()), f"{label}: norms without padding")
check(len(doc.get("figures", [])) == 1 and len(doc["figures"][0]["panels"]) == 3 * len(sentences),
      "one heatmaps figure, three panels per sentence")
if problems:
    print("\n".join(problems))
    print("checks: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)
print(f"ok padding.json ({len(sentences)} sentences, T = {T})")
print("checks: 1 passed, 0 failed, 0 skipped")
PY
"$python" "$ROOT/scripts/plot.py" "$out/padding.json" >/dev/null && echo "ok padding plot"
