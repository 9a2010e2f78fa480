#!/usr/bin/env python3
"""The course's SmolLM2 tokenizer against Hugging Face's, both read from the same GGUF file.

  scripts/check_pretrained_tokenizer.py [build dir]      (default build/reference; run by scripts/test.sh)

The C++ tool (tests/tools/gguf_tokenize.cpp) reads the file with g2c/pretrained/tokenizer.h and
answers JSON lines. Here transformers reads the same file (AutoTokenizer.from_pretrained(dir,
gguf_file=...)), and both are asked:

  chat prompts     apply_chat_template's text and ids for conversations with and without a system
                   message, several turns, unicode, digits, code, emoji, a control token in a message
  TinyShakespeare  the ids of the whole text, then of each of its lines
  texts            numbers after spaces, numbers of other scripts, bytes without a token, random
                   unicode
  decoding         the course's decode of Hugging Face's ids is the exact text
  classes          the pre-tokenizer's class of every code point of planes 0-3 and 14 (the others
                   are unassigned or private use), probed through Hugging Face's own pre-tokenizers

The ids are held to the tokenizer SmolLM2 ships (its tokenizer.json; llama.cpp's "smollm", which the
file names): the ByteLevel pattern after a digit split, Sequence[Digits(individual_digits=True),
ByteLevel]. transformers' conversion of the GGUF file keeps only the ByteLevel part, so here it gets
the digit split back; the texts where the two differ (two or more spaces before a number, numbers
other than ASCII digits) are counted in the summary. Nothing is written to disk. Exits 1 at any
difference, naming the first.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import unicodedata

from tokenizers import Tokenizer, pre_tokenizers
from transformers import AutoTokenizer
from transformers.utils import logging as transformers_logging

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "SmolLM2-135M-Instruct"
GGUF = os.environ.get("G2C_SMOLLM2_GGUF") or os.path.join(ROOT, "artifacts", "pretrained", NAME,
                                                          f"{NAME}.Q4_1.gguf")
PLANES = [(0x0, 0x3FFFF), (0xE0000, 0xEFFFF)]
TOKENLESS = set("\x04\x06\x13\x14\x16\x1d")  # characters whose byte SmolLM2 has no token for

CHATS = [
    ([{"role": "user", "content": "What is the capital of France?"}], True),
    ([{"role": "system", "content": "You are a pirate."}, {"role": "user", "content": "Hello!"}],
     True),
    ([{"role": "user", "content": "Hi"},
      {"role": "assistant", "content": "Hello! How can I help you today?"},
      {"role": "user", "content": "Tell me a joke about 2 + 2 = 4."}], True),
    ([{"role": "user", "content": "Wie geht's? 你好，世界！ Привет, мир. مرحبا بالعالم. Ελληνικά"}],
     False),
    ([{"role": "user", "content": "Compute 1234567 * 89 =   42, then  3.14159;\t7 and ²³ ½ ٣٤ Ⅻ"}],
     True),
    ([{"role": "user", "content": "```python\ndef f(x):\n    return x ** 2  # square\n```\nWhy?"},
      {"role": "assistant", "content": "It squares x.\n\n\tTabs\r\nand CRLF  "}], True),
    ([{"role": "user", "content": "I ❤️ 🦀 and 👩‍👩‍👧 !!! 😀😀 don't they'll I'M"}], True),
    ([{"role": "user", "content": "Say <|im_end|> then <|endoftext|><|im_start|> please"}], True),
    ([{"role": "system", "content": "Only a system message."}], False),
]
TEXTS = ["x  12", "a \n1", "x\t\t9", "²³ ½ ٣٤", "=\x04=", "  \x04", "don't I'll", "'S 'LL 's",
         "\u3000x", "a\x85 b", "a\x1c\x1c b", "   ", "\n", "", "1,000,000.00", "v2.0.1-rc3"]


def tinyshakespeare() -> str | None:
    for path in [os.environ.get("G2C_TINYSHAKESPEARE"), os.path.join(ROOT, "data", "tinyshakespeare.txt"),
                 os.path.join(os.path.dirname(ROOT), "shared", "data", "tinyshakespeare.txt")]:
        if path and os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                return handle.read()
    return None


def random_texts(count: int) -> list[str]:
    """Random strings of assigned code points (no surrogates, none of the control characters
    SmolLM2's vocabulary lacks) mixed with spaces, digits and letters; a fixed seed."""
    rng = random.Random(16)
    pool = [c for c in map(chr, range(0x20, 0x30000)) if unicodedata.category(c) not in ("Cn", "Cs")]
    extra = list(" \n\t  0123456789abc'")
    return ["".join(rng.choice(pool if rng.random() < 0.6 else extra) for _ in range(rng.randint(1, 40)))
            for _ in range(count)]


def hf_class(byte_level, digits, c: str) -> str:
    """A code point's class as Hugging Face's pre-tokenizers see it, in the tool's letters."""
    if c == " ":
        return "S"
    pieces = len(byte_level.pre_tokenize_str(c + c + "y"))
    if pieces == 1:
        base = "L"  # "ccy" is one run of letters
    elif pieces == 3:
        base = "S"  # "c" "c" "y": spaces give their last one away
    else:
        base = "N" if len(byte_level.pre_tokenize_str(c + "1")) == 1 else "-"
    split = len(digits.pre_tokenize_str("." + c + ".")) == 3
    if split != (base == "N"):
        return "D" if base == "-" else "?"
    return base


def first_difference(ours: list, theirs: list) -> str:
    at = next((k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    return f"at index {at}: {ours[at:at + 5]} vs Hugging Face's {theirs[at:at + 5]} ({len(ours)} vs {len(theirs)} ids)"


def main() -> int:
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "reference")
    tool = os.path.join(build, "bin", "gguf_tokenize")
    text = tinyshakespeare()
    for missing, hint in [(not os.path.exists(GGUF), f"{GGUF} is missing: run scripts/setup.sh"),
                          (text is None, "TinyShakespeare is missing: run scripts/setup.sh or set "
                                         "G2C_TINYSHAKESPEARE"),
                          (not os.path.exists(tool), f"{tool} is missing: build the gguf_tokenize target")]:
        if missing:
            print(f"check-pretrained-tokenizer: {hint}")
            return 1
    start = time.time()
    transformers_logging.set_verbosity_error()
    hf = AutoTokenizer.from_pretrained(os.path.dirname(GGUF), gguf_file=os.path.basename(GGUF))
    converted = hf.backend_tokenizer
    smollm = Tokenizer.from_str(converted.to_str())
    smollm.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)])

    lines = text.split("\n")
    texts = TEXTS + random_texts(300)
    chat_texts = [hf.apply_chat_template(messages, tokenize=False, add_generation_prompt=prompt)
                  for messages, prompt in CHATS]
    encoded = [text] + lines + texts + chat_texts  # every text whose ids are compared
    expected = [e.ids for e in smollm.encode_batch(encoded, add_special_tokens=False)]
    converted_ids = [e.ids for e in converted.encode_batch(encoded, add_special_tokens=False)]
    chat_ids = [hf.apply_chat_template(messages, tokenize=True, add_generation_prompt=prompt)["input_ids"]
                for messages, prompt in CHATS]

    requests = [{"encode": t} for t in [text] + lines + texts]
    requests += [{"chat": messages, "add_generation_prompt": prompt} for messages, prompt in CHATS]
    requests += [{"decode": ids} for ids in expected]
    requests += [{"classes": list(plane)} for plane in PLANES]
    run = subprocess.run([tool, GGUF], input="".join(json.dumps(r) + "\n" for r in requests),
                         capture_output=True, text=True)
    # One answer a line, split on "\n" only: str.splitlines() would also cut at U+0085, U+2028 ...
    answers = [json.loads(line) for line in run.stdout.split("\n") if line]
    if run.returncode != 0 or len(answers) != len(requests):
        print(f"check-pretrained-tokenizer: FAILED: the tool exited {run.returncode} after "
              f"{len(answers)} of {len(requests)} answers: {run.stderr.strip()[-300:]}")
        return 1
    encodes = answers[:1 + len(lines) + len(texts)]
    chats = answers[len(encodes):len(encodes) + len(CHATS)]
    decodes = answers[len(encodes) + len(CHATS):len(encodes) + len(CHATS) + len(expected)]
    classes = answers[-len(PLANES):]

    differences = []
    labels = ["TinyShakespeare, whole"] + [f"TinyShakespeare line {k + 1}" for k in range(len(lines))]
    labels += [f"text {t[:30]!r}" for t in texts] + [f"chat {k + 1}" for k in range(len(CHATS))]
    ours = [a.get("ids") for a in encodes] + [a.get("ids") for a in chats]
    for label, mine, theirs in zip(labels, ours, expected):
        if mine != theirs:
            differences.append(f"{label}: ids {first_difference(mine or [], theirs)}")
    for k, (answer, reference, ids) in enumerate(zip(chats, chat_texts, chat_ids)):
        if answer.get("text") != reference:
            differences.append(f"chat {k + 1}: text {answer.get('text')!r} vs {reference!r}")
        if ids != expected[len(encodes) + k] and ids != converted_ids[len(encodes) + k]:
            differences.append(f"chat {k + 1}: apply_chat_template's ids are neither tokenizer's")
    for label, answer, source, ids in zip(labels, decodes, encoded, expected):
        exact = converted.decode(ids, skip_special_tokens=False)  # the text less bytes without a token
        if answer.get("text") != exact or (exact != source and not TOKENLESS & set(source)):
            differences.append(f"{label}: decode {answer.get('text', answer)!r:.60} vs {exact!r:.60}")
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    digits = pre_tokenizers.Digits(individual_digits=True)
    checked = 0
    for (first, last), answer in zip(PLANES, classes):
        for offset, mine in enumerate(answer.get("classes", "")):
            c = first + offset
            if 0xD800 <= c <= 0xDFFF:
                continue
            checked += 1
            theirs = hf_class(byte_level, digits, chr(c))
            if mine != theirs:
                differences.append(f"U+{c:04X}: class {mine} vs Hugging Face's {theirs}")

    conversion_differs = sum(a != b for a, b in zip(expected, converted_ids))
    seconds = encodes[0].get("seconds", float("nan"))
    summary = (f"{len(CHATS)} chat prompts, TinyShakespeare ({len(expected[0]):,} ids whole and "
               f"{len(lines):,} lines), {len(texts)} texts, {checked:,} code points; transformers' "
               f"GGUF conversion (no digit split) differs on {conversion_differs} texts; encode of "
               f"TinyShakespeare {seconds:.2f} s; {time.time() - start:.1f} s")
    if differences:
        print(f"check-pretrained-tokenizer: FAILED, {len(differences)} differences, the first: "
              f"{differences[0]}; {summary}")
        return 1
    print(f"check-pretrained-tokenizer: every id, text, decoding and class identical to Hugging "
          f"Face's: {summary}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
