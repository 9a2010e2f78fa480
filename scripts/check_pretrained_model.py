#!/usr/bin/env python3
"""The course's Llama model against Hugging Face transformers, on SmolLM2-135M-Instruct's GGUF file.

  scripts/check_pretrained_model.py [build dir]      (default build/reference; run by scripts/test.sh)

As llm.c's test_gpt2 holds its C model to PyTorch: the same file is read twice, by the course's C++
code (g2c/pretrained/llama.h through tests/tools/llama_parity.cpp, which dequantizes with the
course's own reader) and by transformers (which dequantizes with the `gguf` package and runs its
own LlamaForCausalLM in float32). For every prompt below, chat-formatted or raw, the logits of
every prompt position must agree within 1e-3 and the greedy continuations, 32 tokens each, must be
the same ids. Both sides feed the prompt at once and then one cached step per token. The course's
model is checked twice: dequantized to float32 on load (the lesson's path) and with its weights
packed (the fast path, g2c/pretrained/packed_weight.h).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings

os.environ.setdefault("TQDM_DISABLE", "1")  # transformers' GGUF conversion draws a progress bar
warnings.filterwarnings("ignore", category=FutureWarning)

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.utils import logging as hf_logging

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "SmolLM2-135M-Instruct"
FOLDER = os.path.join(ROOT, "artifacts", "pretrained", NAME)
FILE = f"{NAME}.Q4_1.gguf"
TOLERANCE = 1e-3
NEW_TOKENS = 32

CHATS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "user", "content": "What is 13 + 28?"}],
    [{"role": "system", "content": "You are a terse assistant. Answer in one line."},
     {"role": "user", "content": "Name three colours of the rainbow."}],
    [{"role": "user", "content": "Hi!"},
     {"role": "assistant", "content": "Hello! How can I help you today?"},
     {"role": "user", "content": "Write a haiku about the sea, then explain its imagery in "
                                 "detail, line by line, for a student of poetry."}],
]
RAW = [
    # 300-odd positions: the rotary angles far from position 0.
    "MENENIUS:\nThere was a time when all the body's members\nRebell'd against the belly, thus "
    "accused it:\n" * 12,
    "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n"
    "First Citizen:\nYou are all resolved rather to die than to famish?\n\n",
]


def hf_run(model, ids: list[int]) -> tuple[np.ndarray, list[int]]:
    with torch.no_grad():
        out = model(torch.tensor([ids]), use_cache=True)
        logits = out.logits[0].float().numpy()
        past, greedy = out.past_key_values, []
        next_id = int(out.logits[0, -1].argmax())
        for step in range(NEW_TOKENS):
            greedy.append(next_id)
            if step + 1 == NEW_TOKENS:
                break
            out = model(torch.tensor([[next_id]]), past_key_values=past, use_cache=True)
            past, next_id = out.past_key_values, int(out.logits[0, -1].argmax())
    return logits, greedy


def main() -> int:
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "reference")
    tool = os.path.join(build, "bin", "llama_parity")
    path = os.path.join(FOLDER, FILE)
    if not os.path.exists(path):
        print(f"check-pretrained-model: {path} is missing: run scripts/setup.sh")
        return 1
    start = time.time()
    torch.set_num_threads(1)
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(FOLDER, gguf_file=FILE)
    model = AutoModelForCausalLM.from_pretrained(FOLDER, gguf_file=FILE, dtype=torch.float32)
    model.eval()
    prompts = [tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
               for chat in CHATS] + RAW
    requests = [tokenizer(text)["input_ids"] for text in prompts]
    theirs = [hf_run(model, ids) for ids in requests]
    problems, worst = [], 0.0
    for weights in ("float32", "packed"):
        print(f"  weights {weights}:")
        command = [tool, path] + (["--packed"] if weights == "packed" else [])
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   env=dict(os.environ, OMP_NUM_THREADS="1"))
        process.stdin.write("".join(json.dumps({"ids": ids, "new_tokens": NEW_TOKENS}) + "\n"
                                    for ids in requests).encode())
        process.stdin.close()
        for number, (ids, (their_logits, greedy)) in enumerate(zip(requests, theirs), start=1):
            header = json.loads(process.stdout.readline())
            count = header["positions"] * header["vocab"]
            ours = np.frombuffer(process.stdout.read(count * 4), dtype=np.float32)
            ours = ours.reshape(header["positions"], header["vocab"])
            error = (float(np.max(np.abs(ours - their_logits)))
                     if ours.shape == their_logits.shape else float("inf"))
            worst = max(worst, error)
            text = tokenizer.decode(greedy)
            print(f"    prompt {number} ({len(ids)} tokens): max |logit difference| {error:.2e}; "
                  f"greedy {'same' if greedy == header['greedy'] else 'DIFFERENT'}: {text[:60]!r}")
            if error > TOLERANCE:
                problems.append(f"{weights}, prompt {number}: logits differ by {error:.2e} > "
                                f"{TOLERANCE}")
            if greedy != header["greedy"]:
                first = next(i for i, (a, b) in enumerate(zip(greedy, header["greedy"])) if a != b)
                problems.append(f"{weights}, prompt {number}: greedy ids differ from token {first}: "
                                f"transformers {greedy[first]}, course {header['greedy'][first]}")
        process.wait()
        if process.returncode != 0:
            problems.append(f"llama_parity ({weights}) exited {process.returncode}")
    for problem in problems:
        print(f"  {problem}")
    print(f"check-pretrained-model: {len(requests)} prompts, float32 and packed weights, logits within {worst:.1e} "
          f"(tolerance {TOLERANCE}), greedy {NEW_TOKENS} tokens each, {len(problems)} problems "
          f"({time.time() - start:.0f} s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
