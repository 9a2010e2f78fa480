#!/usr/bin/env python3
"""Side-by-side benchmark: the `--data random` strip-mask experiment in plain PyTorch and in the
C++ program, on this machine, in one run.

    .venv/bin/python scripts/bench_strip_mask.py [--build build/reference] [--steps 500]

Both sides build the same model (token embedding + learned positions + one single-head attention
layer + a linear head, initialised in the same order from the same seed), use the same optimizer
(SGD lr 0.5), the same batch schedule (windows drawn with generators seeded 1 and 2) and the same
logging (train loss and a 16-batch validation loss every 50 steps). Prints steps/s of each and the
ratio, and the final losses of both (they agree closely: same initial weights, same batches).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VOCAB, T, D, BATCH, LR, TOKENS, STREAM_SEED = 8, 8, 32, 128, 0.5, 4096, 7
LOG_EVERY, VAL_BATCHES = 50, 16


def linear(fan_in, fan_out):
    """The course's Linear: W (in, out) ~ U(±1/√in), b = 0; created in that order."""
    bound = 1.0 / math.sqrt(fan_in)
    w = torch.empty(fan_in, fan_out).uniform_(-bound, bound).requires_grad_()
    b = torch.zeros(fan_out).requires_grad_()
    return w, b


class TinyAttentionLM:
    def __init__(self, causal):
        bound = 1.0 / math.sqrt(D)
        self.tok = torch.empty(VOCAB, D).uniform_(-bound, bound).requires_grad_()
        self.pos = torch.empty(T, D).uniform_(-bound, bound).requires_grad_()
        self.q, self.k, self.v, self.o = (linear(D, D) for _ in range(4))
        self.head = linear(D, VOCAB)
        self.causal = causal
        self.mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)

    def parameters(self):
        return [self.tok, self.pos, *self.q, *self.k, *self.v, *self.o, *self.head]

    def forward(self, ids):  # (B, T) -> (B, T, V)
        x = self.tok[ids] + self.pos[: ids.shape[1]]
        q = x @ self.q[0] + self.q[1]
        k = x @ self.k[0] + self.k[1]
        v = x @ self.v[0] + self.v[1]
        scores = q @ k.transpose(-2, -1) / math.sqrt(D)
        if self.causal:
            scores = scores.masked_fill(self.mask[: ids.shape[1], : ids.shape[1]], float("-inf"))
        mixed = torch.softmax(scores, dim=-1) @ v
        out = mixed @ self.o[0] + self.o[1]
        return out @ self.head[0] + self.head[1]

    def loss(self, ids):
        logits = self.forward(ids)[:, :-1]
        return torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1))


def windows(stream, generator):
    starts = torch.randint(stream.numel() - T + 1, (BATCH,), generator=generator)
    return stream[starts[:, None] + torch.arange(T)[None, :]]


def python_run(causal, batch_seed, steps, model_seed):
    stream = torch.randint(VOCAB, (TOKENS,), generator=torch.Generator().manual_seed(STREAM_SEED))
    val = torch.randint(VOCAB, (TOKENS // 4,), generator=torch.Generator().manual_seed(STREAM_SEED + 1))
    torch.manual_seed(model_seed)
    model = TinyAttentionLM(causal)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    batches = torch.Generator().manual_seed(batch_seed)
    train_losses = []
    start = time.perf_counter()
    for step in range(steps):
        loss = model.loss(windows(stream, batches))
        if step % LOG_EVERY == 0 or step == steps - 1:
            train_losses.append(loss.item())
            with torch.no_grad():
                val_generator = torch.Generator().manual_seed(1234)
                sum(model.loss(windows(val, val_generator)).item() for _ in range(VAL_BATCHES))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return time.perf_counter() - start, train_losses[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "reference"))
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    program = os.path.join(args.build, "bin", "07_strip_mask")
    if not os.path.exists(program):
        sys.exit(f"{program} not found: build it with cmake --build --preset reference --target 07_strip_mask")

    with tempfile.TemporaryDirectory() as out:
        subprocess.run([program, "--data", "random", "--steps", str(args.steps), "--seed", str(args.seed),
                        "--out", out, "--quiet", "--no-plot"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        with open(os.path.join(out, "strip_mask_random.json"), encoding="utf-8") as handle:
            cpp = json.load(handle)["runs"]

    print(f"strip-mask control (--data random, {args.steps} steps per run), torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads")
    print(f"{'run':<11} {'C++ steps/s':>12} {'Python steps/s':>15} {'ratio':>7} {'C++ loss':>10} {'Python loss':>12}")
    ratios = []
    for name, causal, batch_seed in (("causal", True, 1), ("non_causal", False, 2)):
        seconds, python_loss = python_run(causal, batch_seed, args.steps, args.seed)
        cpp_rate = args.steps / cpp[name]["wall_seconds"]
        python_rate = args.steps / seconds
        ratios.append(cpp_rate / python_rate)
        print(f"{name:<11} {cpp_rate:>12.1f} {python_rate:>15.1f} {ratios[-1]:>6.2f}x "
              f"{cpp[name]['final_train_loss']:>10.4f} {python_loss:>12.4f}")
    print(f"C++ / Python steps per second: {sum(ratios) / len(ratios):.2f}x (mean of both runs)")


if __name__ == "__main__":
    main()
