#!/usr/bin/env python3
"""Side-by-side benchmark of module 10's pretraining run: the C++ exercise 10_pretrain
(ShakespeareLM-1M trained by g2c::pretraining::Trainer) against the same model and the same loop
in idiomatic PyTorch, on this machine, one after the other, with the same threads and steps.

    .venv/bin/python scripts/bench_pretrain.py                    # both paths, cpu preset, 200 steps
    .venv/bin/python scripts/bench_pretrain.py --path lesson --steps 20 --threads 1
    .venv/bin/python scripts/bench_pretrain.py --python-only --steps 5 --threads 1  # no C++ build
    options: --build build/reference  --steps N  --threads 2  --preset cpu  --vocab 0  --seed 0
             --repeats 1  --path lesson|fused|both  --python-flush-denormal  --device cpu|cuda
             --json PATH

Two comparisons, like with like (--path both runs the two):
  lesson  10_pretrain as a student runs it (the course's own LayerNorm, attention, cross-entropy
          and AdamW, computed as the lessons write them) against PyTorch computing the same
          formulas written out: the masked softmax attention, LayerNorm as mean / variance /
          normalize, cross-entropy as max-shift and log-sum-exp; torch.optim.AdamW.
  fused   10_pretrain --fused (g2c/transformer/fused.h and g2c/nn/fused_adamw.h) against
          idiomatic PyTorch: F.scaled_dot_product_attention, nn.LayerNorm, F.cross_entropy and
          torch.optim.AdamW(fused=True).

Needs build/reference/bin/10_pretrain (cmake --build build/reference --target 10_pretrain; with
--vocab other than 0 also the g2c-tokenizer target).

What both sides do. The first 1,000,000 characters of data/tinyshakespeare.txt, encoded with the
ShakespeareTokenizer at --vocab (0: bytes and the 8 reserved specials only, V 264: one id per byte,
which is what this script does itself after checking that no special token occurs in the text;
any other vocabulary is encoded by g2c-tokenizer), split 90 / 10 at floor(0.9 n) as
split_token_stream does. A TransformerLM with D 128, L 4, H 4, max_seq_len 128: token embedding
tied with the output head plus a separate head bias, learned positions, pre-norm blocks (LayerNorm
eps 1e-5; attention with separate q/k/v/out projections, all with bias, heads split as
(B, T, H, D/H); feed-forward D -> 4D -> D with exact GELU), a final LayerNorm; 843,784 parameters
at V 264 (checked against the closed form and against the C++ run's config.parameters). PyTorch
builds it from nn.Embedding, nn.Linear and nn.GELU with the attention, LayerNorm and loss of the
path being compared, and draws the initial
weights in the course's order and bounds from the same seed (uniform +-1/sqrt(fan_in), biases 0,
LayerNorm 1 and 0), so both sides start from the same weights. The loop is the Trainer's: every
step a batch of random windows from a generator seeded with --seed (the same generator draws the
evaluation batches, so both sides see the same batches in the same order), the lr of
cosine_with_warmup written to the optimizer, zero_grad, cross-entropy over all B*T positions,
backward, global-norm clipping at 1.0, AdamW (betas 0.9/0.999, eps 1e-8, weight decay 0.01, max lr
6e-4 to min lr 3e-5); the batch loss logged every log_every steps and at the last; the mean loss of
eval_iters validation batches (no autograd) at every eval_every-th step and at the last; a rolling
checkpoint (parameters, optimizer state, generator state, history; written to a temporary file,
renamed, the previous kept as .bak) every checkpoint_every steps and at the last. PyTorch clips
with torch.nn.utils.clip_grad_norm_, C++ with the course's own.

What is timed. 10_pretrain's pretrain.json "seconds" is the wall time of trainer.train(...) alone:
it starts after tokenizing, building the model and the optimizer, and ends before the model
artifact is saved and reloaded; inside it are the training steps AND the evaluations, the logging
callback and the checkpoint writes. Its "tokens_per_s" is (steps * batch_size * context_length) /
seconds: training tokens only in the numerator, evaluation time in the denominator. The PyTorch
side is timed over exactly the same span (its loop with evaluation, logging and checkpoints) and
divided the same way. With --preset cpu and the default 200 steps that is 3 evaluations of 10
forward-only batches and 2 checkpoints per side, a few per cent of the time. --steps replaces the
preset's step count, and so the horizon of the cosine schedule, as in 10_pretrain. The C++
program flushes denormal floats to zero; idiomatic PyTorch does not (--python-flush-denormal makes
it). Both run on the CPU by default; --device cuda runs both on the GPU (10_pretrain gets the same
--device; batches are drawn on the CPU from the same generator on both sides and then moved, the
timer stops after the device has finished).

Prints, per side: steps, seconds, tokens/s, final train loss (the last step's batch) and final
validation loss, then the ratio C++ / PyTorch tokens/s (> 1: C++ is faster) and the step-0 losses
of both sides. Same weights and same batches make the step-0 losses agree to rounding; later
losses stay close but are not guaranteed equal (the two sides' kernels round differently, and such
differences can grow over a long run). With --repeats N the sides alternate N times and the times
are medians.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
from torch import nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHARACTERS = 1_000_000  # the lesson's first million characters
TRAIN_FRACTION = 0.9
# The model and optimizer of 10_pretrain's Config (the same in every preset).
MODEL = dict(embedding_dim=128, num_layers=4, num_heads=4, max_seq_len=128)
OPTIMIZER = dict(max_lr=6e-4, min_lr=3e-5, weight_decay=0.01, grad_clip=1.0)
# 10_pretrain's kPresets.
PRESETS = {
    "smoke": dict(steps=6, batch_size=4, context_length=32, warmup_steps=2, eval_every=2, eval_iters=2,
                  log_every=1, checkpoint_every=2),
    "cpu": dict(steps=1000, batch_size=16, context_length=128, warmup_steps=100, eval_every=100,
                eval_iters=10, log_every=20, checkpoint_every=100),
    "course": dict(steps=10000, batch_size=32, context_length=128, warmup_steps=200, eval_every=100,
                   eval_iters=20, log_every=20, checkpoint_every=100),
}
KNOWN_PARAMETERS = {264: 843_784, 4096: 1_338_112}  # exercises/10-pretraining/README.md


# --- data -------------------------------------------------------------------------------------


def load_ids(vocab, build):
    """The token stream 10_pretrain trains on, and its vocabulary size V."""
    artifact = os.path.join(ROOT, "artifacts", "tokenizers", "ShakespeareTokenizer")
    with open(os.path.join(artifact, "tokenizer.json"), encoding="utf-8") as handle:
        specials = json.load(handle)["special_tokens"]
    with open(os.path.join(ROOT, "data", "tinyshakespeare.txt"), "rb") as handle:
        text = handle.read()[:CHARACTERS]  # 10_pretrain's substr(0, 1'000'000): bytes
    base = 256 + len(specials)
    V = base if vocab == 0 else min(vocab, 4096)  # course_tokenizer caps at the artifact's 4096
    if V == base:
        # encode_base: one id per byte, a special token's text becoming its id. None occurs here.
        found = [token for token in specials if token.encode() in text]
        if found:
            sys.exit(f"special tokens {found} occur in the text: encode with g2c-tokenizer instead")
        return torch.frombuffer(bytearray(text), dtype=torch.uint8).to(torch.long), V
    tool = os.path.join(build, "bin", "g2c-tokenizer")
    if not os.path.exists(tool):
        sys.exit(f"{tool} not found (needed for --vocab {vocab}): "
                 f"cmake --build {os.path.relpath(build, ROOT)} --target g2c-tokenizer")
    with tempfile.TemporaryDirectory() as folder:
        source, output = os.path.join(folder, "text.txt"), os.path.join(folder, "ids.uint32")
        with open(source, "wb") as handle:
            handle.write(text)  # encode the prefix itself: merges may cross a cut in the ids
        subprocess.run([tool, "encode", artifact, "--input", source, "--vocab-size", str(V),
                        "--output", output], check=True, stdout=subprocess.DEVNULL)
        with open(output, "rb") as handle:
            ids = torch.frombuffer(bytearray(handle.read()), dtype=torch.int32).to(torch.long)
    return ids, V


def split_token_stream(ids):
    split = int(math.floor(ids.numel() * TRAIN_FRACTION))
    return ids[:split], ids[split:]


def get_lm_batch(ids, B, T, generator):
    """B windows with starts uniform in [0, n - T): x = ids[s : s+T], y = ids[s+1 : s+T+1]."""
    starts = torch.randint(0, ids.numel() - T, (B,), generator=generator)
    windows = ids[starts[:, None] + torch.arange(T + 1)]  # (B, T + 1)
    return windows[:, :-1], windows[:, 1:]


def cosine_with_warmup(step, warmup_steps, max_steps, max_lr, min_lr):
    if warmup_steps > 0 and step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    if step >= max_steps:
        return min_lr
    progress = (step - warmup_steps) / (max_steps - warmup_steps)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (max_lr - min_lr)


# --- the model --------------------------------------------------------------------------------


def parameter_count(V, D, L, max_seq_len, hidden):
    """g2c::transformer::parameter_count: the closed form."""
    per_block = 4 * (D * D + D) + (2 * D * hidden + hidden + D) + 4 * D
    return V * D + max_seq_len * D + L * per_block + 2 * D + V


class Attention(nn.Module):
    def __init__(self, D, heads, max_seq_len, fused):
        super().__init__()
        self.heads, self.fused = heads, fused
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (nn.Linear(D, D) for _ in range(4))
        self.register_buffer("mask", torch.ones(max_seq_len, max_seq_len, dtype=torch.bool).triu(1),
                             persistent=False)

    def forward(self, x):  # (B, T, D) -> (B, T, D)
        B, T, D = x.shape
        q, k, v = (proj(x).view(B, T, self.heads, D // self.heads).transpose(1, 2)
                   for proj in (self.q_proj, self.k_proj, self.v_proj))  # (B, H, T, d) each
        if self.fused:
            mixed = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = q @ k.transpose(-2, -1) / math.sqrt(D // self.heads)  # (B, H, T, T)
            mixed = scores.masked_fill(self.mask[:T, :T], float("-inf")).softmax(dim=-1) @ v
        return self.out_proj(mixed.transpose(1, 2).reshape(B, T, D))


class LessonLayerNorm(nn.Module):
    """Module 09's formula written out: (x - mean) / sqrt(var + eps) * gamma + beta."""

    def __init__(self, D, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight, self.bias = nn.Parameter(torch.ones(D)), nn.Parameter(torch.zeros(D))

    def reset_parameters(self):
        self.weight.fill_(1.0)
        self.bias.zero_()

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, unbiased=False, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


def layer_norm(D, fused):
    return nn.LayerNorm(D) if fused else LessonLayerNorm(D)


def cross_entropy(logits, targets, fused):
    """Mean loss over (N, V) rows: F.cross_entropy, or module 03's max-shift and log-sum-exp."""
    if fused:
        return F.cross_entropy(logits, targets)
    row_max = logits.max(dim=1, keepdim=True).values
    log_sum_exp = row_max.squeeze(1) + torch.log(torch.exp(logits - row_max).sum(dim=1))
    return (log_sum_exp - logits.gather(1, targets.unsqueeze(1)).squeeze(1)).mean()


class Block(nn.Module):
    def __init__(self, D, heads, hidden, max_seq_len, fused):
        super().__init__()
        self.ln1 = layer_norm(D, fused)
        self.attn = Attention(D, heads, max_seq_len, fused)
        self.ln2 = layer_norm(D, fused)
        self.ffn = nn.Sequential(nn.Linear(D, hidden), nn.GELU(), nn.Linear(hidden, D))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.ffn(self.ln2(x))


class TransformerLM(nn.Module):
    def __init__(self, V, D, L, heads, max_seq_len, hidden, fused):
        super().__init__()
        self.token_embed = nn.Embedding(V, D)
        self.pos_embed = nn.Embedding(max_seq_len, D)
        self.blocks = nn.ModuleList(Block(D, heads, hidden, max_seq_len, fused) for _ in range(L))
        self.ln_final = layer_norm(D, fused)
        self.head_bias = nn.Parameter(torch.zeros(V))

    def forward(self, ids):  # (B, T) -> (B, T, V)
        x = self.token_embed(ids) + self.pos_embed.weight[: ids.shape[1]]
        for block in self.blocks:
            x = block(x)
        return F.linear(self.ln_final(x), self.token_embed.weight, self.head_bias)  # tied head

    @torch.no_grad()
    def course_init(self, seed):
        """The C++ model's initial weights: its draws, in its order, from the same seed."""
        torch.manual_seed(seed)

        def uniform(tensor, fan_in):
            bound = 1.0 / math.sqrt(fan_in)
            return tensor.uniform_(-bound, bound)

        D = self.token_embed.embedding_dim
        uniform(self.token_embed.weight, D)
        uniform(self.pos_embed.weight, D)
        for block in self.blocks:
            linears = (block.attn.q_proj, block.attn.k_proj, block.attn.v_proj, block.attn.out_proj,
                       block.ffn[0], block.ffn[2])
            for layer in linears:  # the course's W is (in, out): nn.Linear's weight transposed
                out_features, in_features = layer.weight.shape
                layer.weight.copy_(uniform(torch.empty(in_features, out_features), in_features).t())
                layer.bias.zero_()
            for norm in (block.ln1, block.ln2):
                norm.reset_parameters()
        self.ln_final.reset_parameters()
        self.head_bias.zero_()


# --- the PyTorch side -------------------------------------------------------------------------


def save_checkpoint(path, model, optimizer, generator, step, history):
    """Atomic, as the Trainer's: write a temporary file, keep the previous as .bak, rename."""
    temporary = path + ".tmp"
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "generator": generator.get_state(), "step": step, "history": history}, temporary)
    if os.path.exists(path):
        os.replace(path, path + ".bak")
    os.replace(temporary, path)


def python_run(setup, args, fused):
    """One training run in PyTorch; returns the numbers 10_pretrain's pretrain.json holds."""
    torch.set_num_threads(args.threads)
    torch.set_flush_denormal(args.python_flush_denormal)
    train_ids, val_ids = setup["train"], setup["val"]
    m, t, o = setup["model"], setup["training"], OPTIMIZER
    model = TransformerLM(m["vocab_size"], m["embedding_dim"], m["num_layers"], m["num_heads"],
                          m["max_seq_len"], m["hidden"], fused)
    model.course_init(args.seed)
    device = torch.device(args.device)
    model.to(device)
    parameters = sum(p.numel() for p in model.parameters())
    optimizer = torch.optim.AdamW(model.parameters(), lr=o["max_lr"], betas=(0.9, 0.999), eps=1e-8,
                                  weight_decay=o["weight_decay"], fused=fused or None)
    generator = torch.Generator().manual_seed(args.seed)
    B, T, steps = t["batch_size"], t["context_length"], t["max_steps"]
    history = {key: [] for key in ("step", "train_loss", "lr", "grad_norm", "val_step", "val_loss")}

    def evaluate():
        with torch.no_grad():
            total = 0.0
            for _ in range(t["eval_iters"]):
                x, y = (batch.to(device) for batch in get_lm_batch(val_ids, B, T, generator))
                logits = model(x)
                total += cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1),
                                       fused).item()
            return total / t["eval_iters"]

    with tempfile.TemporaryDirectory() as folder:
        checkpoint = os.path.join(folder, "pretrain.pt")
        start = time.perf_counter()
        for step in range(steps):
            x, y = (batch.to(device) for batch in get_lm_batch(train_ids, B, T, generator))
            lr = cosine_with_warmup(step, t["warmup_steps"], steps, o["max_lr"], o["min_lr"])
            for group in optimizer.param_groups:
                group["lr"] = lr
            optimizer.zero_grad()
            logits = model(x)
            loss = cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), fused)
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), o["grad_clip"])
            optimizer.step()
            done = step + 1 == steps
            if step % t["log_every"] == 0 or done:
                for key, value in (("step", step), ("train_loss", loss.item()), ("lr", lr),
                                   ("grad_norm", grad_norm.item())):
                    history[key].append(value)
            if step % t["eval_every"] == 0 or done:
                history["val_step"].append(step)
                history["val_loss"].append(evaluate())
            if (step + 1) % t["checkpoint_every"] == 0 or done:
                save_checkpoint(checkpoint, model, optimizer, generator, step + 1, history)
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
    return {"parameters": parameters, "seconds": seconds, "tokens_per_s": steps * B * T / seconds,
            "history": history, "final": {"steps_completed": steps,
                                          "train_loss": history["train_loss"][-1],
                                          "val_loss": history["val_loss"][-1]}}


# --- the C++ side -----------------------------------------------------------------------------


def cpp_run(program, args, fused):
    """Runs 10_pretrain (with --fused for the fast path) into temporary folders; returns its
    pretrain.json."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "out")
        command = [program, "--preset", args.preset, "--steps", str(args.steps), "--threads",
                   str(args.threads), "--seed", str(args.seed), "--vocab", str(args.vocab),
                   "--device", args.device, "--out", out, "--artifact-dir", os.path.join(folder, "model"),
                   "--quiet", "--no-plot"] + (["--fused"] if fused else [])
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-2000:]}"
                     f"{done.stderr[-2000:]}")
        with open(os.path.join(out, "pretrain.json"), encoding="utf-8") as handle:
            return json.load(handle)


def check_same_setup(result, setup, parameters, fused):
    """The C++ run's recorded configuration must be the one the PyTorch side trains."""
    config, problems = result["config"], []
    setup = dict(setup, training=dict(setup["training"], fused_kernels=fused))
    model = {key: value for key, value in setup["model"].items() if key != "hidden"}
    expectations = [("config.model", config["model"], model),
                    ("config.training", config["training"], setup["training"]),
                    ("config.parameters", config["parameters"], parameters),
                    ("config.tokenizer.vocab_size", config["tokenizer"]["vocab_size"],
                     setup["model"]["vocab_size"]),
                    ("config.corpus tokens / train / val",
                     [config["corpus"][key] for key in ("tokens", "train_tokens", "val_tokens")],
                     [setup["train"].numel() + setup["val"].numel(), setup["train"].numel(),
                      setup["val"].numel()]),
                    ("final.steps_completed", result["final"]["steps_completed"],
                     setup["training"]["max_steps"])]
    for what, cpp, python in expectations:
        if cpp != python:
            problems.append(f"{what}: C++ {cpp}, PyTorch {python}")
    if problems:
        sys.exit("the two sides do not train the same thing:\n  " + "\n  ".join(problems))


# --- main -------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "reference"))
    parser.add_argument("--steps", type=int, default=200,
                        help="training steps per side, also the cosine schedule's horizon (default: 200, "
                        "about a minute per side of the cpu preset on a 2-core CPU)")
    parser.add_argument("--threads", type=int, default=min(2, os.cpu_count() or 1),
                        help="intra-op threads of both sides (default: 2, or fewer CPUs)")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="cpu")
    parser.add_argument("--vocab", type=int, default=0, help="ShakespeareTokenizer vocabulary, as "
                        "10_pretrain's --vocab (0: bytes and specials, V 264)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=1, help="alternate C++ and PyTorch this many "
                        "times; the table shows medians")
    parser.add_argument("--path", choices=("lesson", "fused", "both"), default="both",
                        help="lesson: the course's formulas on both sides; fused: 10_pretrain --fused "
                        "against idiomatic PyTorch (SDPA, nn.LayerNorm, F.cross_entropy, fused "
                        "AdamW); both (default): the two comparisons one after the other")
    parser.add_argument("--python-flush-denormal", action="store_true",
                        help="let PyTorch flush denormals to zero too, as the C++ exercises do "
                        "(idiomatic PyTorch does not)")
    parser.add_argument("--python-only", action="store_true", help="run only the PyTorch side (no C++ "
                        "build needed at --vocab 0): a check of the script itself")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="where both sides train (default: cpu)")
    parser.add_argument("--json", metavar="PATH", help="also write the numbers to this JSON file")
    args = parser.parse_args()
    if args.steps < 1 or args.threads < 1 or args.repeats < 1:
        parser.error("--steps, --threads and --repeats must be at least 1")
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: this PyTorch sees no CUDA device")
    program = os.path.join(args.build, "bin", "10_pretrain")
    if not args.python_only and not os.path.exists(program):
        sys.exit(f"{program} not found: cmake --build {os.path.relpath(args.build, ROOT)} --target "
                 f"10_pretrain (or pass --python-only)")

    preset = PRESETS[args.preset]
    ids, V = load_ids(args.vocab, args.build)
    train, val = split_token_stream(ids)
    D, L = MODEL["embedding_dim"], MODEL["num_layers"]
    setup = {
        "train": train, "val": val,
        "model": dict(vocab_size=V, **MODEL, hidden_dim=4 * D, hidden=4 * D),
        "training": {"batch_size": preset["batch_size"], "context_length": preset["context_length"],
                     "max_steps": args.steps, "optimizer": "adamw", "max_lr": OPTIMIZER["max_lr"],
                     "min_lr": OPTIMIZER["min_lr"], "warmup_steps": preset["warmup_steps"],
                     "weight_decay": OPTIMIZER["weight_decay"], "grad_clip": OPTIMIZER["grad_clip"],
                     "eval_every": preset["eval_every"], "eval_iters": preset["eval_iters"],
                     "log_every": preset["log_every"], "checkpoint_every": preset["checkpoint_every"]},
    }
    closed_form = parameter_count(V, D, L, MODEL["max_seq_len"], 4 * D)
    if V in KNOWN_PARAMETERS and closed_form != KNOWN_PARAMETERS[V]:
        sys.exit(f"closed-form parameter count {closed_form:,} at V {V}, the README says "
                 f"{KNOWN_PARAMETERS[V]:,}")

    paths = ("lesson", "fused") if args.path == "both" else (args.path,)
    records = {path: compare(path, program, setup, closed_form, args) for path in paths}
    if args.json:
        record = {"preset": args.preset, "device": args.device, "steps": args.steps, "threads": args.threads, "seed": args.seed,
                  "vocab_size": V, "parameters": closed_form, "training": setup["training"],
                  "python_flush_denormal": args.python_flush_denormal, "repeats": args.repeats,
                  "torch_version": torch.__version__, "paths": records}
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=2)
        print(f"wrote {args.json}")


def compare(path, program, setup, closed_form, args):
    """Runs one path's pair (C++ then PyTorch, --repeats times), prints its table, returns it."""
    fused = path == "fused"
    cpp_runs, py_runs = [], []
    for _ in range(args.repeats):
        if not args.python_only:
            cpp_runs.append(cpp_run(program, args, fused))
        py_runs.append(python_run(setup, args, fused))
        parameters = py_runs[-1]["parameters"]
        if parameters != closed_form:
            sys.exit(f"the PyTorch model has {parameters:,} parameters, the closed form {closed_form:,}")
        if cpp_runs:
            check_same_setup(cpp_runs[-1], setup, parameters, fused)

    median = statistics.median
    preset = PRESETS[args.preset]
    B, T = preset["batch_size"], preset["context_length"]
    V = setup["model"]["vocab_size"]
    print()
    print(f"path {path}: " + ("C++ 10_pretrain (the course's own code) against PyTorch computing the "
                              "same formulas written out" if not fused else
                              "C++ 10_pretrain --fused against idiomatic PyTorch (SDPA, nn.LayerNorm, "
                              "F.cross_entropy, fused AdamW)"))
    print(f"preset {args.preset} (B {B} x T {T} = {B * T} tokens a step, warmup "
          f"{preset['warmup_steps']}, evaluation every {preset['eval_every']} steps x "
          f"{preset['eval_iters']} batches, checkpoint every {preset['checkpoint_every']}), V {V}, "
          f"{closed_form:,} parameters on both sides, {args.steps} steps, on {args.device}, "
          f"{args.threads} threads, "
          f"torch {torch.__version__}"
          + (f" (C++ built with {cpp_runs[-1]['torch_version']})" if cpp_runs else "")
          + (", PyTorch flushing denormals" if args.python_flush_denormal else "")
          + (f", median of {args.repeats}" if args.repeats > 1 else ""))
    print("seconds: the training loop with its evaluations and checkpoints; tokens/s: training "
          "tokens / seconds")
    rows = ([("C++", cpp_runs)] if cpp_runs else []) + [("PyTorch", py_runs)]
    summary = {}
    print(f"{'side':<8} {'steps':>6} {'seconds':>8} {'tokens/s':>9} {'train loss':>11} {'val loss':>9}")
    for side, runs in rows:
        final = runs[-1]["final"]
        summary[side] = {"steps": final["steps_completed"],
                         "seconds": median(run["seconds"] for run in runs),
                         "tokens_per_s": median(run["tokens_per_s"] for run in runs),
                         "seconds_each": [run["seconds"] for run in runs],
                         "final_train_loss": final["train_loss"], "final_val_loss": final["val_loss"],
                         "step0_train_loss": runs[-1]["history"]["train_loss"][0],
                         "step0_val_loss": runs[-1]["history"]["val_loss"][0]}
        s = summary[side]
        print(f"{side:<8} {s['steps']:>6} {s['seconds']:>8.1f} {s['tokens_per_s']:>9,.0f} "
              f"{s['final_train_loss']:>11.4f} {s['final_val_loss']:>9.4f}")
    ratio = None
    if cpp_runs:
        cpp, py = summary["C++"], summary["PyTorch"]
        ratio = cpp["tokens_per_s"] / py["tokens_per_s"]
        print(f"path {path}: C++ / PyTorch tokens/s: {ratio:.2f}x (> 1: C++ is faster)")
        print(f"step 0 (same weights, same batch): train loss C++ {cpp['step0_train_loss']:.6f}, PyTorch "
              f"{py['step0_train_loss']:.6f}; validation C++ {cpp['step0_val_loss']:.6f}, PyTorch "
              f"{py['step0_val_loss']:.6f}. Later losses are close, not necessarily equal: the kernels "
              f"round differently.")
    else:
        py = summary["PyTorch"]
        print(f"step 0: train loss {py['step0_train_loss']:.6f}, validation {py['step0_val_loss']:.6f} "
              f"(ln V = {math.log(V):.4f}); --python-only: no C++ run")
    return {"sides": summary, "cpp_over_pytorch_tokens_per_s": ratio}


if __name__ == "__main__":
    main()
