#!/usr/bin/env python3
"""The course's GGUF reader against the `gguf` Python package, on every tensor of SmolLM2.

  scripts/check_gguf.py [build dir]      (default build/reference; run by scripts/test.sh)

The C++ tool (tests/tools/gguf_dump.cpp) opens the file with g2c/pretrained/gguf.h, prints what it
read of the metadata as one JSON line on stderr, and writes every tensor dequantized to float32 to
stdout, in file order. Here the same file is read with gguf.GGUFReader and each tensor dequantized
with gguf.quants.dequantize; every value must have the same bits. The metadata the model needs
(architecture, sizes, tokenizer) must agree too. Streamed through a pipe: nothing is written to disk.
"""
from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import time

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GGUF = os.path.join(ROOT, "artifacts", "pretrained", "SmolLM2-135M-Instruct",
                    "SmolLM2-135M-Instruct.Q4_1.gguf")


def main() -> int:
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "reference")
    tool = os.path.join(build, "bin", "gguf_dump")
    if not os.path.exists(GGUF):
        print(f"check-gguf: {GGUF} is missing: run scripts/setup.sh")
        return 1
    start = time.time()
    reader = GGUFReader(GGUF)
    process = subprocess.Popen([tool, GGUF], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    counts, different = collections.Counter(), []
    for tensor in reader.tensors:
        expected = dequantize(tensor.data, tensor.tensor_type).astype(np.float32).reshape(-1)
        got = np.frombuffer(process.stdout.read(expected.size * 4), dtype=np.float32)
        counts[tensor.tensor_type.name] += 1
        if got.size != expected.size or not np.array_equal(got.view(np.uint32),
                                                          expected.view(np.uint32)):
            error = float(np.max(np.abs(got - expected))) if got.size == expected.size else "size"
            different.append(f"{tensor.name} ({tensor.tensor_type.name}): {error}")
    left = process.stdout.read()
    summary = json.loads(process.stderr.read().decode().splitlines()[-1])
    process.wait()
    fields = {"general.architecture": summary["architecture"],
              "llama.block_count": summary["block_count"],
              "llama.embedding_length": summary["embedding_length"],
              "llama.attention.head_count": summary["head_count"],
              "llama.attention.head_count_kv": summary["head_count_kv"],
              "llama.feed_forward_length": summary["feed_forward_length"],
              "llama.context_length": summary["context_length"]}
    disagree = [key for key, value in fields.items() if reader.fields[key].contents() != value]
    tokens = reader.fields["tokenizer.ggml.tokens"].contents()
    merges = reader.fields["tokenizer.ggml.merges"].contents()
    if summary["tokens"] != len(tokens) or summary["merges"] != len(merges):
        disagree.append("tokenizer sizes")
    if summary["last_merge"] != merges[-1] or summary["token_1000"] != tokens[1000]:
        disagree.append("tokenizer strings")
    print(f"check-gguf: {len(reader.tensors)} tensors ({dict(counts)}), "
          f"{sum(t.n_elements for t in reader.tensors):,} values, {time.time() - start:.1f} s")
    for line in different[:10]:
        print(f"  DIFFERENT {line}")
    for key in disagree:
        print(f"  METADATA {key} differs")
    if process.returncode != 0 or left:
        print(f"  the tool exited {process.returncode} with {len(left)} bytes left over")
    ok = not different and not disagree and process.returncode == 0 and not left
    print("check-gguf: every value bit-identical to gguf.quants.dequantize" if ok else
          "check-gguf: FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
