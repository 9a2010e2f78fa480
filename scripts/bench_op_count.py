#!/usr/bin/env python3
"""ATen operators dispatched per training step: the C++ course (10_op_count) beside PyTorch eager.

    .venv/bin/python scripts/bench_op_count.py                 # needs build/reference/bin/10_op_count
    .venv/bin/python scripts/bench_op_count.py --python-only   # no C++ build
    options: --build build/reference  --steps 3  --json PATH

On a GPU each operator is at least one kernel launch, and ShakespeareLM-1M is small enough that a
training step is launch-bound, so the number of operators, not the arithmetic, sets its speed. The
count does not depend on the device and is measured here on the CPU.

Both sides count the same way: every operator whose name starts with "aten::" that the dispatcher
runs while the step executes, nested ones included (aten::linear and the aten::addmm inside it
count as two), forward and backward. C++ uses a RecordFunction observer (10_op_count), PyTorch its
profiler, which is built on the same RecordFunction hooks. The model and loop are
scripts/bench_pretrain.py's (ShakespeareLM-1M's shape, the cpu preset's batch of 16 x 128, AdamW
with weight decay 0.01, clipping at 1.0), for two pairs, like with like:
  lesson  the course's own code   against PyTorch computing the same formulas written out
  fused   10_pretrain --fused     against idiomatic PyTorch (SDPA, nn.LayerNorm, F.cross_entropy,
                                  torch.optim.AdamW(fused=True))
The C++ side also reports operators per generated token, with and without the KV cache.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_pretrain as bench  # noqa: E402  (the model and loop being compared)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
V, B, T = 264, 16, 128


def python_ops_per_step(fused, steps):
    """Operators per training step of bench_pretrain's PyTorch loop (after one unmeasured step)."""
    torch.manual_seed(0)
    m = bench.MODEL
    model = bench.TransformerLM(V, m["embedding_dim"], m["num_layers"], m["num_heads"],
                                m["max_seq_len"], 4 * m["embedding_dim"], fused)
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.999), eps=1e-8,
                                  weight_decay=0.01, fused=fused or None)
    stream = torch.randint(0, V, (20_000,))
    generator = torch.Generator().manual_seed(0)

    def step():
        x, y = bench.get_lm_batch(stream, B, T, generator)
        for group in optimizer.param_groups:
            group["lr"] = 6e-4
        optimizer.zero_grad()
        logits = model(x)
        loss = bench.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), fused)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()

    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    count = sum(1 for event in prof.events() if event.name.startswith("aten::"))
    return count / steps


def cpp_counts(build, steps):
    program = os.path.join(build, "bin", "10_op_count")
    if not os.path.exists(program):
        sys.exit(f"{program} not found: cmake --build {os.path.relpath(build, ROOT)} --target "
                 "10_op_count (or pass --python-only)")
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([program, "--steps", str(steps), "--out", folder, "--quiet", "--no-plot"],
                       check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        with open(os.path.join(folder, "op_count.json"), encoding="utf-8") as handle:
            return json.load(handle)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "reference"))
    parser.add_argument("--steps", type=int, default=3, help="measured steps per side (default 3)")
    parser.add_argument("--python-only", action="store_true")
    parser.add_argument("--json", metavar="PATH", help="also write the numbers to this JSON file")
    args = parser.parse_args()
    torch.set_num_threads(1)
    cpp = None if args.python_only else cpp_counts(args.build, args.steps)
    record = {"steps": args.steps, "torch_version": torch.__version__, "paths": {}}
    print(f"ATen operators per training step (ShakespeareLM-1M shape, B {B} x T {T}, AdamW, "
          f"clipping), torch {torch.__version__}")
    print(f"{'path':<8} {'C++':>8} {'PyTorch':>8} {'C++ / PyTorch':>14}")
    for path in ("lesson", "fused"):
        python = python_ops_per_step(path == "fused", args.steps)
        ours = cpp[path]["train_step"]["ops_per_step"] if cpp else None
        ratio = f"{ours / python:.2f}" if ours else "-"
        print(f"{path:<8} {ours if ours is not None else '-':>8} {python:>8.0f} {ratio:>14}")
        record["paths"][path] = {"cpp_ops_per_step": ours, "pytorch_ops_per_step": python,
                                 "cpp_generation": cpp[path]["generation"] if cpp else None}
    if cpp:
        for path in ("lesson", "fused"):
            generation = cpp[path]["generation"]
            print(f"C++ {path}: {generation['uncached_ops_per_token']} operators per token without "
                  f"the KV cache (a forward of {cpp['config']['prompt_tokens']} tokens), "
                  f"{generation['cached_ops_per_token']} with it")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=2)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
