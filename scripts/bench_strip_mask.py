#!/usr/bin/env python3
"""Side-by-side benchmark of module 07's strip-mask experiment: the C++ program against the same
model and training in idiomatic PyTorch, on this machine, one after the other.

    .venv/bin/python scripts/bench_strip_mask.py                  # the main job, 1000 steps
    .venv/bin/python scripts/bench_strip_mask.py --config random  # the control experiment
    options: --build build/reference  --steps N  --threads 2  --repeats 2  --no-pair
             --path lesson|fused|both

Both sides build the same model (token embedding + learned positions + one single-head attention
layer + a linear head, initialised in the same order from the same seed), train it with the same
optimizer on the same batches (TinyShakespeare ids from the ShakespeareTokenizer at vocabulary
2048, windows drawn with generators seeded 1 and 2) and log the same way (the batch loss and a
16-batch validation loss every 50 steps). Two comparisons, like with like (--path both, the
default, runs the two):
  lesson  07_strip_mask --path lesson, a student build's default (the course's own modules:
          module 03's cross-entropy as max-shift and log-sum-exp, module 03b's AdamW) against
          PyTorch computing the loss the same way, with torch.optim.AdamW's loop over the
          parameters (foreach=False);
  fused   07_strip_mask --path fast, the reference build's default (LibTorch's fused
          cross-entropy and AdamW, the attention the lesson's) against idiomatic PyTorch:
          F.cross_entropy and torch.optim.AdamW(fused=True).
Both sides use nn.Linear-style layers and the same masked-softmax attention.

Per run it prints the seconds of each side (C++ from its JSON: the whole loop, validation
included; PyTorch timed the same way), the ratio PyTorch / C++ (> 1: C++ is faster) and both final
losses (close, not equal: the two libraries round differently). Then the pair: both runs one after
the other with every thread each, and side by side (the C++ default; two PyTorch processes with one
thread each), timed from outside as wall time.
"""
import argparse
import json
import math
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOG_EVERY, VAL_BATCHES, VAL_SEED = 50, 16, 1234
CONFIGS = {
    # V is the tokenizer's; T, D, B, optimizer, lr, weight decay as 07_strip_mask's presets.
    "main": dict(T=32, D=64, B=32, optimizer="adamw", lr=3e-3, weight_decay=1e-4),
    "random": dict(T=8, D=32, B=128, optimizer="sgd", lr=0.5, weight_decay=0.0, V=8, tokens=4096,
                   stream_seed=7),
}
RUNS = (("causal", True, 1), ("non_causal", False, 2))


def course_uniform(rows, cols, fan):
    bound = 1.0 / math.sqrt(fan)
    return torch.empty(rows, cols).uniform_(-bound, bound)


class TinyAttentionLM(torch.nn.Module):
    """The exercise's model with PyTorch's own layers, initialised as the course initialises."""

    def __init__(self, V, T, D, causal):
        super().__init__()
        self.tok = torch.nn.Embedding(V, D)
        self.pos = torch.nn.Parameter(torch.empty(T, D))
        self.q, self.k, self.v, self.o = (torch.nn.Linear(D, D) for _ in range(4))
        self.head = torch.nn.Linear(D, V)
        with torch.no_grad():  # the course's draw order: token table, positions, then W of each
            self.tok.weight.copy_(course_uniform(V, D, D))
            self.pos.copy_(course_uniform(T, D, D))
            for layer, fan_out in ((self.q, D), (self.k, D), (self.v, D), (self.o, D), (self.head, V)):
                layer.weight.copy_(course_uniform(D, fan_out, D).t())  # course W is (in, out)
                layer.bias.zero_()
        self.causal = causal
        self.register_buffer("mask", torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1))

    def forward(self, ids):  # (B, T) -> (B, T, V)
        T = ids.shape[1]
        x = self.tok(ids) + self.pos[:T]
        q, k, v = self.q(x), self.k(x), self.v(x)
        scores = q @ k.transpose(-2, -1) / math.sqrt(x.shape[-1])
        if self.causal:
            scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        return self.head(self.o(torch.softmax(scores, dim=-1) @ v))

    def loss(self, ids, fused):  # every position but the last predicts the next token of the window
        logits = self.forward(ids)[:, :-1]
        rows, targets = logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1)
        if fused:
            return F.cross_entropy(rows, targets)
        row_max = rows.max(dim=1, keepdim=True).values  # module 03's formula, written out
        log_sum_exp = row_max.squeeze(1) + torch.log(torch.exp(rows - row_max).sum(dim=1))
        return (log_sum_exp - rows.gather(1, targets.unsqueeze(1)).squeeze(1)).mean()


def windows(stream, T, B, generator):
    starts = torch.randint(0, stream.numel() - T + 1, (B,), generator=generator)
    return stream[starts[:, None] + torch.arange(T)[None, :]]


def python_run(config, streams, causal, batch_seed, steps, seed, threads, flush_denormal=False):
    """One training run in PyTorch; returns (seconds of the loop, final train loss, final val loss)."""
    torch.set_num_threads(threads)
    torch.set_flush_denormal(flush_denormal)
    train, val = streams
    V, T, D, B = config["V"], config["T"], config["D"], config["B"]
    torch.manual_seed(seed)
    model = TinyAttentionLM(V, T, D, causal)
    if config["optimizer"] == "sgd":
        optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"],
                                      weight_decay=config["weight_decay"],
                                      **(dict(fused=True) if config["fused"] else dict(foreach=False)))
    batches = torch.Generator().manual_seed(batch_seed)
    val_generator = torch.Generator().manual_seed(VAL_SEED)
    validation = [windows(val, T, B, val_generator) for _ in range(VAL_BATCHES)]
    train_loss = val_loss = float("nan")
    start = time.perf_counter()
    for step in range(steps):
        loss = model.loss(windows(train, T, B, batches), config["fused"])
        if step % LOG_EVERY == 0 or step == steps - 1:
            train_loss = loss.item()
            with torch.no_grad():
                val_loss = sum(model.loss(batch, config["fused"]).item()
                               for batch in validation) / VAL_BATCHES
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return time.perf_counter() - start, train_loss, val_loss


def _python_worker(args):
    return python_run(*args)


def load_streams(config, build):
    """The token ids both sides train on, split 90 / 10 as the exercises split them."""
    if "stream_seed" in config:
        seed = config["stream_seed"]
        train = torch.randint(config["V"], (config["tokens"],), generator=torch.Generator().manual_seed(seed))
        val = torch.randint(config["V"], (config["tokens"] // 4,),
                            generator=torch.Generator().manual_seed(seed + 1))
        return train, val
    tool = os.path.join(build, "bin", "g2c-tokenizer")
    artifact = os.path.join(ROOT, "artifacts", "tokenizers", "ShakespeareTokenizer")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "ids.uint32")
        subprocess.run([tool, "encode", artifact, "--input", os.path.join(ROOT, "data", "tinyshakespeare.txt"),
                        "--vocab-size", "2048", "--output", path], check=True, stdout=subprocess.DEVNULL)
        with open(path, "rb") as handle:
            ids = torch.frombuffer(bytearray(handle.read()), dtype=torch.int32).to(torch.long)
    config["V"] = 2048
    split = ids.numel() * 9 // 10
    return ids[:split], ids[split:]


def cpp_command(program, args, out, extra):
    command = [program, "--steps", str(args.steps), "--seed", str(args.seed), "--out", out, "--quiet",
               "--no-plot", "--sample-tokens", "0", "--path", "fast" if args.fused else "lesson"] + extra
    return command + (["--data", "random"] if args.config == "random" else [])


def cpp_pair(program, args, sequential):
    """Runs the C++ program once; returns (wall seconds of the process, its runs from the JSON)."""
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        start = time.perf_counter()
        extra = ["--sequential", "--threads", str(args.threads)] if sequential else ["--threads", "1"]
        subprocess.run(cpp_command(program, args, out, extra), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        wall = time.perf_counter() - start
        name = "strip_mask_random.json" if args.config == "random" else "strip_mask.json"
        with open(os.path.join(out, name), encoding="utf-8") as handle:
            return wall, json.load(handle)["runs"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", choices=sorted(CONFIGS), default="main")
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "reference"))
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1),
                        help="intra-op threads of a run trained alone (default: 2)")
    parser.add_argument("--repeats", type=int, default=1, help="alternate C++ and PyTorch this many times; "
                        "the tables show medians")
    parser.add_argument("--path", choices=("lesson", "fused", "both"), default="both",
                        help="lesson: the course's formulas on both sides; fused: 07_strip_mask --path fast "
                        "against idiomatic PyTorch; both (default)")
    parser.add_argument("--no-pair", action="store_true", help="skip the side-by-side pair timings")
    parser.add_argument("--python-flush-denormal", action="store_true",
                        help="let PyTorch flush denormals to zero too, as the C++ exercises do "
                        "(idiomatic PyTorch does not)")
    args = parser.parse_args()
    program = os.path.join(args.build, "bin", "07_strip_mask")
    if not os.path.exists(program):
        sys.exit(f"{program} not found: cmake --build --preset reference --target 07_strip_mask g2c-tokenizer")
    streams = load_streams(dict(CONFIGS[args.config]), args.build)
    for path in (("lesson", "fused") if args.path == "both" else (args.path,)):
        args.fused = path == "fused"
        config = dict(CONFIGS[args.config], V=2048 if args.config == "main" else 8, fused=args.fused)
        compare(path, program, config, streams, args)


def compare(path, program, config, streams, args):
    """One path's table: the two runs on each side, then the pair."""

    cpp_seconds = {name: [] for name, _, _ in RUNS}
    py_seconds = {name: [] for name, _, _ in RUNS}
    pair = {"cpp_sequential": [], "cpp_side_by_side": [], "py_sequential": [], "py_side_by_side": []}
    losses = {}
    for _ in range(args.repeats):
        wall, runs = cpp_pair(program, args, sequential=True)
        pair["cpp_sequential"].append(wall)
        py_wall = 0.0
        for name, causal, batch_seed in RUNS:
            cpp_seconds[name].append(runs[name]["wall_seconds"])
            start = time.perf_counter()
            seconds, train_loss, val_loss = python_run(config, streams, causal, batch_seed, args.steps,
                                                       args.seed, args.threads, args.python_flush_denormal)
            py_wall += time.perf_counter() - start
            py_seconds[name].append(seconds)
            losses[name] = (runs[name]["final_train_loss"], runs[name]["final_val_loss"], train_loss, val_loss)
        pair["py_sequential"].append(py_wall)
        if args.no_pair:
            continue
        pair["cpp_side_by_side"].append(cpp_pair(program, args, sequential=False)[0])
        start = time.perf_counter()
        jobs = [(config, streams, causal, seed, args.steps, args.seed, 1, args.python_flush_denormal)
                for _, causal, seed in RUNS]
        with multiprocessing.get_context("spawn").Pool(len(jobs)) as pool:
            pool.map(_python_worker, jobs)
        pair["py_side_by_side"].append(time.perf_counter() - start)

    median = statistics.median
    print()
    print(f"path {path}: " + ("07_strip_mask --path fast against idiomatic PyTorch" if args.fused else
                              "07_strip_mask (the course's own code) against PyTorch computing the same "
                              "loss and AdamW step by step"))
    print(f"strip-mask, {args.config} configuration (V {config['V']}, T {config['T']}, D {config['D']}, "
          f"B {config['B']}, {config['optimizer']}), {args.steps} steps per run, {args.threads} threads, "
          f"torch {torch.__version__}, median of {args.repeats}"
          f"{', PyTorch flushing denormals' if args.python_flush_denormal else ''}")
    print(f"{'run':<11} {'C++ s':>8} {'PyTorch s':>10} {'PyTorch/C++':>12} {'C++ loss (train/val)':>22} "
          f"{'PyTorch loss (train/val)':>26}")
    for name, _, _ in RUNS:
        cpp, py = median(cpp_seconds[name]), median(py_seconds[name])
        ct, cv, pt, pv = losses[name]
        print(f"{name:<11} {cpp:>8.1f} {py:>10.1f} {py / cpp:>11.2f}x {ct:>11.4f} / {cv:<8.4f} "
              f"{pt:>13.4f} / {pv:<8.4f}")
    print(f"{'pair (wall time of both runs)':<32} {'C++ s':>8} {'PyTorch s':>10} {'PyTorch/C++':>12}")
    rows = [("one after the other", "cpp_sequential", "py_sequential")]
    if not args.no_pair:
        rows.append(("side by side, 1 thread each", "cpp_side_by_side", "py_side_by_side"))
    for label, cpp_key, py_key in rows:
        cpp, py = median(pair[cpp_key]), median(pair[py_key])
        print(f"{label:<32} {cpp:>8.1f} {py:>10.1f} {py / cpp:>11.2f}x")


if __name__ == "__main__":
    main()
