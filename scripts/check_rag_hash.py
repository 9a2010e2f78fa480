#!/usr/bin/env python3
"""Module 17's HashEmbedder against the Python edition's definition: the same text, the same vector.

  .venv/bin/python scripts/check_rag_hash.py [build dir]     (default build/reference)

The Python side is the definition written out here with Python's own pieces, independent of the
C++ code: str.lower(), n-grams of characters (code points) for every n in ngram_range,
hashlib.blake2b(seed.to_bytes(8, "big") + ngram.encode("utf-8"), digest_size=8) read big-endian,
mod dim, counted, and each row scaled to unit length in float32. The C++ side is the course's
HashEmbedder::embed (tests/tools/rag_hash_embed.cpp). Texts: chunks of the course's READMEs and of
TinyShakespeare when it is there, and strings chosen for what could differ — Greek with final and
medial capital sigmas, the Turkish dotted I, German ß, combining accents, emoji joined by ZWJ,
CJK, texts shorter than the smallest n, and the empty text. Settings: the default (512, (3, 5),
seed 0) and others (another dim, ranges from 1, a seed above 2**63).

Every vector must match to 1e-6 and have its counts in the same buckets; exits 1 otherwise.
"""
import glob
import hashlib
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def python_embed(texts, dim, ngram_range, seed):
    out = np.zeros((len(texts), dim), dtype=np.float32)
    salt = seed.to_bytes(8, "big", signed=False)
    for row, text in enumerate(texts):
        lowered = text.lower()
        for n in range(ngram_range[0], ngram_range[1] + 1):
            for start in range(len(lowered) - n + 1):
                digest = hashlib.blake2b(salt + lowered[start:start + n].encode("utf-8"), digest_size=8).digest()
                out[row, int.from_bytes(digest, "big") % dim] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0)


def texts():
    chosen = [
        "", "a", "ab", "The quick brown fox", "ΣΑΣ ΟΔΟΣ. Ὀδυσσεύς ΣΊΣΥΦΟΣ", "ΑΣ'Σ ΑΣ\u0301 Σ",
        "İstanbul ILIK ıi", "STRASSE Straße ẞ", "e\u0301te\u0301 Café", "👩\u200d💻 at 🌍🌍!",
        "中文字符和日本語のテキスト", "Ǆungla ǅ ǆ", "  tabs\tand\nnewlines  ",
    ]
    for path in sorted(glob.glob(os.path.join(ROOT, "exercises", "*", "README.md")))[:8]:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        chosen += [text[i:i + 700] for i in range(0, min(len(text), 7000), 700)]
    shakespeare = os.environ.get("G2C_TINYSHAKESPEARE", os.path.join(ROOT, "..", "shared", "data", "tinyshakespeare.txt"))
    if os.path.exists(shakespeare):
        with open(shakespeare, encoding="utf-8") as f:
            text = f.read(60000)
        chosen += [text[i:i + 1500] for i in range(0, len(text), 1500)]
    return chosen


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "reference")
    tool = os.path.join(build, "bin", "rag_hash_embed")
    if not os.path.exists(tool):
        print(f"check_rag_hash: {tool} is missing; build it: cmake --build --preset reference --target rag_hash_embed")
        return 1
    sample = texts()
    problems = 0
    for dim, ngram_range, seed in [(512, (3, 5), 0), (64, (1, 2), 7), (4096, (2, 6), 2**63 + 5)]:
        request = {"dim": dim, "ngram_range": list(ngram_range), "seed": seed, "texts": sample}
        run = subprocess.run([tool], input=json.dumps(request).encode(), capture_output=True)
        if run.returncode != 0:
            print(f"check_rag_hash: {tool} failed: {run.stderr.decode().strip()}")
            return 1
        cpp = np.array(json.loads(run.stdout)["vectors"], dtype=np.float32).reshape(len(sample), dim)
        python = python_embed(sample, dim, ngram_range, seed)
        for i, text in enumerate(sample):
            same_buckets = np.array_equal(cpp[i] != 0, python[i] != 0)
            if not same_buckets or not np.allclose(cpp[i], python[i], rtol=0, atol=1e-6):
                problems += 1
                print(f"  dim={dim} range={ngram_range} seed={seed}: text {i} {text[:40]!r} differs "
                      f"(max |diff| {np.abs(cpp[i] - python[i]).max():.2e})")
        print(f"dim={dim} ngram_range={ngram_range} seed={seed}: {len(sample)} texts compared")
    print(f"check_rag_hash: {3 * len(sample)} vectors, {problems} differ from the Python definition")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
