#!/usr/bin/env python3
"""Model artifacts travel between this edition and the Python one, checked with PyTorch itself.

  scripts/check_model_interop.py [build dir]      (default build/reference; run by scripts/test.sh)

C++ to Python: the C++ tool (tests/tools/model_interop.cpp) saves a TransformerLM with random
weights through save_model_artifact and computes its logits for fixed ids. Here model.pt is loaded
with torch.load, weights_only=True (the loader that cannot run code) and weights_only=False (what
the Python edition's loader calls); its layout, config.json and manifest.json are held to the
Python edition's artifact contract; and the logits are computed again by the plain-PyTorch forward
below, written from the architecture alone.

Python to C++: a model.pt written here with torch.save in the Python edition's layout (random
weights, hidden_dim left to its default, as a Python user writes it) beside its config.json and
manifest.json; the C++ tool loads it with load_model_artifact and computes logits for ids saved
here; they must equal the forward below.

Each direction fails loudly and prints the largest logit difference.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

TOLERANCE = 1e-5  # float32 C++ against the float64 forward below, logits of order 1
KEYWORDS = ["embedding_dim", "num_layers", "num_heads", "max_seq_len", "hidden_dim"]
MANIFEST_FIELDS = ["name", "module", "source", "tokenizer_artifact", "vocab_size", "model_config",
                   "training_config", "seed", "git_commit", "created_at", "steps_completed",
                   "final_train_loss", "final_val_loss", "notes", "base_artifact"]


def parameter_shapes(vocab_size: int, config: dict) -> list[tuple[int, ...]]:
    """The shapes of the Python TransformerLM.parameters(), in that order."""
    D = config["embedding_dim"]
    hidden = config.get("hidden_dim") or 4 * D
    shapes = [(vocab_size, D), (config["max_seq_len"], D)]  # token_embed, pos_embed
    for _ in range(config["num_layers"]):
        shapes += [(D,), (D,)]  # ln1 gamma, beta
        shapes += [(D, D), (D,)] * 4  # q_proj, k_proj, v_proj, out_proj: W (in, out), b
        shapes += [(D,), (D,)]  # ln2 gamma, beta
        shapes += [(D, hidden), (hidden,), (hidden, D), (D,)]  # ffn fc1, fc2
    return shapes + [(D,), (D,), (vocab_size,)]  # ln_final gamma, beta; head_bias


def forward(params: list[torch.Tensor], config: dict, ids: torch.Tensor) -> torch.Tensor:
    """The course's TransformerLM in plain PyTorch and float64: learned token and position
    embeddings, pre-norm blocks (causal multi-head attention, exact-erf GELU feed-forward), a
    final LayerNorm and the tied head with its bias. ids (B, T) -> logits (B, T, V)."""
    p = iter([t.double() for t in params])
    take = lambda n: [next(p) for _ in range(n)]
    B, T = ids.shape
    D, H = config["embedding_dim"], config["num_heads"]
    d = D // H
    token, position = take(2)
    x = token[ids] + position[:T]  # (B, T, D)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)  # (T, T): True above the diagonal
    heads = lambda t: t.view(B, T, H, d).transpose(1, 2)  # (B, T, D) -> (B, H, T, d)
    for _ in range(config["num_layers"]):
        g1, b1, Wq, bq, Wk, bk, Wv, bv, Wo, bo, g2, b2, W1, c1, W2, c2 = take(16)
        h = F.layer_norm(x, (D,), g1, b1, eps=1e-5)
        q, k, v = heads(h @ Wq + bq), heads(h @ Wk + bk), heads(h @ Wv + bv)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(future, float("-inf"))
        mixed = (scores.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, D)  # (B, T, D)
        x = x + mixed @ Wo + bo
        h = F.layer_norm(x, (D,), g2, b2, eps=1e-5)
        x = x + F.gelu(h @ W1 + c1, approximate="none") @ W2 + c2
    gamma, beta, head_bias = take(3)
    assert next(p, None) is None, "more parameters than the architecture has"
    x = F.layer_norm(x, (D,), gamma, beta, eps=1e-5)
    return x @ token.T + head_bias  # (B, T, V)


class Checks:
    def __init__(self) -> None:
        self.problems: list[str] = []

    def __call__(self, ok: bool, what: str) -> None:
        if not ok:
            self.problems.append(what)

    def compare(self, direction: str, logits: torch.Tensor, expected: torch.Tensor) -> None:
        self(logits.shape == expected.shape,
             f"{direction}: logits {tuple(logits.shape)}, expected {tuple(expected.shape)}")
        if logits.shape == expected.shape:
            difference = (logits.double() - expected).abs().max().item()
            print(f"{direction}: largest |logit difference| {difference:.3g} over logits "
                  f"{tuple(logits.shape)} (tolerance {TOLERANCE:g})")
            self(difference <= TOLERANCE,
                 f"{direction}: the logits differ by {difference:.3g} > {TOLERANCE:g}")


def run_tool(tool: str, *args: str) -> None:
    done = subprocess.run([tool, *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"model_interop {' '.join(args)} failed (exit {done.returncode}):\n{done.stderr}")


def cpp_to_python(tool: str, folder: str, check: Checks) -> None:
    artifact = os.path.join(folder, "InteropLM")
    logits_file = os.path.join(folder, "cpp_logits.pt")
    run_tool(tool, "save", artifact, logits_file)
    model_file = os.path.join(artifact, "model.pt")
    state = torch.load(model_file, weights_only=True)
    permissive = torch.load(model_file, weights_only=False)
    check(sorted(state) == ["model_config", "params", "vocab_size"],
          f"model.pt keys: {sorted(state)}")
    config = state["model_config"]
    check(sorted(config) == sorted(KEYWORDS) and config["hidden_dim"] == 40,
          f"model_config: the Python TransformerLM's keywords with the real width, got {config}")
    check(isinstance(state["vocab_size"], int), f"vocab_size {state['vocab_size']!r}")
    shapes = [tuple(t.shape) for t in state["params"]]
    check(shapes == parameter_shapes(state["vocab_size"], config),
          f"parameters in the Python order: shapes {shapes}")
    check(all(torch.equal(a, b) for a, b in zip(state["params"], permissive["params"])),
          "weights_only=False reads the same parameters")
    saved_config = json.load(open(os.path.join(artifact, "config.json")))
    check(saved_config["model_config"] == config, f"config.json: {saved_config}")
    manifest = json.load(open(os.path.join(artifact, "manifest.json")))
    missing = [field for field in MANIFEST_FIELDS if field not in manifest]
    check(not missing, f"manifest.json lacks {missing}")
    check(manifest.get("base_artifact", "absent") is None, "manifest base_artifact: null")
    check(manifest.get("model_config") == config and manifest.get("vocab_size") == state["vocab_size"],
          "manifest model_config and vocab_size")
    result = torch.load(logits_file, weights_only=True)
    check.compare("C++ -> Python", result["logits"], forward(state["params"], config, result["ids"]))


def python_to_cpp(tool: str, folder: str, check: Checks) -> None:
    artifact = os.path.join(folder, "PythonLM")
    os.makedirs(artifact)
    vocab_size = 29
    config = {"embedding_dim": 16, "num_layers": 2, "num_heads": 4, "max_seq_len": 12}
    generator = torch.Generator().manual_seed(0)
    params = [0.3 * torch.randn(shape, generator=generator)
              for shape in parameter_shapes(vocab_size, config)]
    torch.save({"vocab_size": vocab_size, "model_config": dict(config), "params": params},
               os.path.join(artifact, "model.pt"))
    with open(os.path.join(artifact, "config.json"), "w") as out:
        json.dump({"model_config": config, "training_config": {"max_steps": 0}}, out)
    with open(os.path.join(artifact, "manifest.json"), "w") as out:
        json.dump({"name": "PythonLM", "module": "module-10", "source": "random weights",
                   "tokenizer_artifact": "ShakespeareTokenizer", "vocab_size": vocab_size,
                   "model_config": config, "training_config": {"max_steps": 0}, "seed": 0,
                   "git_commit": None, "created_at": "2025-01-01T00:00:00+00:00",
                   "steps_completed": 0, "final_train_loss": None, "final_val_loss": None,
                   "notes": "written by scripts/check_model_interop.py"}, out)
    ids = torch.randint(0, vocab_size, (3, config["max_seq_len"]), generator=generator)
    ids_file, logits_file = os.path.join(folder, "ids.pt"), os.path.join(folder, "py_logits.pt")
    torch.save({"ids": ids}, ids_file)
    run_tool(tool, "logits", artifact, ids_file, logits_file)
    result = torch.load(logits_file, weights_only=True)
    check(torch.equal(result["ids"], ids), "the C++ tool read the ids written here")
    check.compare("Python -> C++", result["logits"], forward(params, config, ids))


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "reference")
    tool = os.path.join(build, "bin", "model_interop")
    if not os.access(tool, os.X_OK):
        sys.exit(f"{tool} is missing: build it with `cmake --build --preset reference --target "
                 "model_interop`")
    torch.set_num_threads(1)
    start = time.monotonic()
    check = Checks()
    with tempfile.TemporaryDirectory(prefix="g2c-interop-") as folder:
        cpp_to_python(tool, folder, check)
        python_to_cpp(tool, folder, check)
    print(f"torch {torch.__version__}, {time.monotonic() - start:.1f}s")
    if check.problems:
        print("\n".join(f"FAIL {problem}" for problem in check.problems))
        print("checks: 0 passed, 1 failed, 0 skipped")
        return 1
    print("ok model.pt both ways: C++ -> Python (weights_only=True) and Python -> C++")
    print("checks: 1 passed, 0 failed, 0 skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
