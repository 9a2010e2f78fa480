#!/usr/bin/env bash
# Runs the module 12 scaling ladder in its smoke preset (three tiny sizes, a few steps) and checks
# scaling.json against exercises/12-scaling/README.md: one entry per rung with N increasing, finite
# losses, tokens = steps × B × T and C = 6 · N · tokens for every rung, loss-against-tokens curves,
# the fits (L(N) over the final losses, L(C) over the compute frontier) and three figures; the model
# artifacts (module-12 manifests, named by size, never module 10's ShakespeareLM-1M); and that the
# lesson path (--lesson-path) starts from the fast path's losses.
#   scripts/smoke_12.sh [build dir]      (default build/reference)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/smoke.sh" "$@"

run=("$bin/12_scaling" --quiet --no-plot --threads 1 --preset smoke)
"${run[@]}" --out "$out" --artifact-dir "$out/artifacts" >/dev/null
"${run[@]}" --out "$out/lesson" --no-save --lesson-path --steps 2 >/dev/null

"$python" - "$out/scaling.json" "$out/lesson/scaling.json" "$out/artifacts" <<'PY'
import json, math, os, sys

result = json.load(open(sys.argv[1]))
lesson = json.load(open(sys.argv[2]))
artifacts = sys.argv[3]
problems = []
check = lambda ok, what: ok or problems.append(what)
close = lambda a, b: abs(a - b) <= 1e-9 * max(abs(a), abs(b))

for key in ["program", "device", "seed", "preset", "config", "rungs", "fit", "ln_vocab", "figures"]:
    check(key in result, f"scaling.json: no {key!r}")
config, rungs = result["config"], result["rungs"]
training = config["training"]
check(result["preset"] == "smoke" and config["path"] == "fused", "smoke preset on the fast path")
check(config["tokenizer"]["vocab_size"] == 264, "the ShakespeareTokenizer at --vocab 0 (V 264)")
check(len(rungs) == len(config["rungs"]) == 3, f"one entry per rung: {len(rungs)}")
steps, B, T = training["max_steps"], training["batch_size"], training["context_length"]
check(training["tokens"] == steps * B * T, "config tokens = steps x B x T")
for key in ["non_embedding", "total"]:
    counts = [r["parameters"][key] for r in rungs]
    check(all(a < b for a, b in zip(counts, counts[1:])), f"{key} parameters increase: {counts}")
for r in rungs:
    name, p = r["name"], r["parameters"]
    check(name == "ShakespeareLM-" + r["label"] and name != "ShakespeareLM-1M", f"{name}: name")
    check(p["total"] == p["non_embedding"] + p["embedding"], f"{name}: total = non-embedding + embedding")
    check(p["embedding"] == (r["model"]["vocab_size"] + r["model"]["max_seq_len"]) * r["model"]["embedding_dim"],
          f"{name}: embedding = (V + max_seq_len) x D")
    check(r["tokens"] == steps * B * T, f"{name}: the same token budget as every rung")
    check(close(r["compute"], 6 * p["non_embedding"] * r["tokens"]), f"{name}: C = 6 N tokens")
    check(close(r["compute_total_params"], 6 * p["total"] * r["tokens"]), f"{name}: 6 N_total tokens")
    check(math.isfinite(r["final_val_loss"]) and 0 < r["final_val_loss"] < 10, f"{name}: final loss")
    check(close(r["final_val_perplexity"], math.exp(r["final_val_loss"])), f"{name}: perplexity")
    check(r["seconds"] > 0 and r["tokens_per_s"] > 0, f"{name}: time and rate")
    h = r["history"]
    check(h["step"][-1] == steps - 1 and h["val_step"][-1] == steps - 1, f"{name}: ran every step")
    for series in ["train_loss", "val_loss", "lr", "grad_norm"]:
        check(all(x is not None and math.isfinite(x) for x in h[series]), f"{name}: {series} not finite")
    check(r["curve"]["tokens"] == [(s + 1) * B * T for s in h["val_step"]], f"{name}: curve tokens")
    check(all(close(c, 6 * p["non_embedding"] * t) for c, t in zip(r["curve"]["compute"], r["curve"]["tokens"])),
          f"{name}: curve compute = 6 N tokens")
    check(r["artifact"] == os.path.join(artifacts, name), f"{name}: artifact at {r['artifact']}")
    manifest = json.load(open(os.path.join(artifacts, name, "manifest.json")))
    check(manifest["name"] == name and manifest["module"] == "module-12", f"{name}: manifest")
    check(manifest["parameter_count"] == p["total"], f"{name}: manifest parameter_count")
    check(manifest["training_config"]["max_steps"] == steps and manifest["training_config"]["tokens"] == r["tokens"],
          f"{name}: manifest training_config")
    check(os.path.isfile(os.path.join(artifacts, name, "model.pt")), f"{name}: model.pt")
check(sorted(os.listdir(artifacts)) == sorted(r["name"] for r in rungs), "one artifact per rung")

fit = result["fit"]
for key in ["loss_vs_parameters", "loss_vs_total_parameters", "loss_vs_compute"]:
    f = fit[key]
    check(math.isfinite(f["alpha"]) and f["a"] > 0 and -1e-9 <= f["r2"] <= 1 + 1e-9, f"fit {key}")
    check(len(f["curve"]["x"]) == len(f["curve"]["loss"]) >= 2, f"fit {key}: its line")
    check(all(close(l, f["a"] * x ** -f["alpha"]) for x, l in zip(f["curve"]["x"], f["curve"]["loss"])),
          f"fit {key}: the line is a * x^-alpha")
by_n = fit["loss_vs_parameters"]
check(by_n["points"] == len(rungs), "L(N) fitted over every rung")
check(fit["points"]["non_embedding"] == [r["parameters"]["non_embedding"] for r in rungs], "fit points N")
check(fit["points"]["final_val_loss"] == [r["final_val_loss"] for r in rungs], "fit points loss")
# The least-squares slope, recomputed.
lx = [math.log(r["parameters"]["non_embedding"]) for r in rungs]
ly = [math.log(r["final_val_loss"]) for r in rungs]
mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
slope = sum((x - mx) * (y - my) for x, y in zip(lx, ly)) / sum((x - mx) ** 2 for x in lx)
check(abs(by_n["alpha"] + slope) < 1e-9, f"alpha {by_n['alpha']} is minus the log-log slope {slope}")
frontier = fit["loss_vs_compute"]["frontier"]
check(fit["loss_vs_compute"]["points"] == len(frontier["compute"]) >= 2, "L(C) over the frontier")
check(all(a < b for a, b in zip(frontier["compute"], frontier["compute"][1:]))
      and all(a > b for a, b in zip(frontier["loss"], frontier["loss"][1:])),
      "the frontier: more compute, lower loss")
files = [f["file"] for f in result["figures"]]
check(files == ["scaling_params.png", "scaling_compute.png", "scaling_tokens.png"], f"figures {files}")
check(all(f.get("logx") and f.get("logy") for f in result["figures"]), "log-log figures")

check(lesson["config"]["path"] == "lesson" and not lesson["config"]["training"]["fused_kernels"],
      "--lesson-path: the course's own code")
check(all(r["artifact"] is None for r in lesson["rungs"]), "--no-save: no artifacts")
for a, b in zip(result["rungs"], lesson["rungs"]):
    for series in ["train_loss", "val_loss"]:
        x, y = a["history"][series][0], b["history"][series][0]
        check(abs(x - y) < 1e-4, f"{a['name']}: step-0 {series}, fused {x}, lesson {y}")
if problems:
    print("\n".join(problems))
    print("checks: 0 passed, 1 failed, 0 skipped")
    sys.exit(1)
print("ok scaling.json, the fits, the artifacts, the lesson path")
print("checks: 1 passed, 0 failed, 0 skipped")
PY
"$python" "$ROOT/scripts/plot.py" "$out/scaling.json" >/dev/null && echo "ok plots"
