#!/usr/bin/env python3
"""Python's str.lower() as tables, for g2c::rag::python_lower (g2c/rag/lowercase.h).

  .venv/bin/python scripts/gen_lowercase_table.py           rewrites g2c/rag/lowercase_table.inc
  .venv/bin/python scripts/gen_lowercase_table.py --check   exits 1 when the committed file is not
                                                            what it writes (or the tables fail the
                                                            comparison below)

The retrieval module's hashing embedder lowercases text as the Python edition does, with
str.lower(), so the tables are read off the Python that runs the script: its Unicode version
(unicodedata.unidata_version, 14.0.0 for Python 3.11) is written into the file, and
g2c/rag/lowercase.h's kLowercaseUnicodeVersion must say the same (lowercase.cpp checks it when it
compiles). A Python of another Unicode version writes other tables.

str.lower() maps each character on its own (chr(c).lower(), one to three characters), except
U+03A3 'Σ', which becomes the final sigma 'ς' instead of 'σ' when it ends a word (CPython's
handle_capital_sigma):

  a cased character, then any case-ignorable characters, then Σ, and after it no case-ignorable
  characters followed by a cased character

The file holds three tables:

  kLowerRanges      {first, last, delta, stride}: the code points first, first + stride, ... up to
                    last become code point + delta (one character each); the others in the range
                    are their own lowercase
  kLowerExpansions  {code point, mapped code points, count}: those that become two or three
  kCaseRanges       {first, last, class}: the runs of kCased and kCaseIgnorable characters

The two classes are read off str.lower() itself, with Σ after each character x:

  (x + "Σ").lower() ends in ς          x is cased and not case-ignorable
  ("A" + x + "Σ").lower() ends in ς    x is case-ignorable or cased

subtle: a character can be both cased and case-ignorable (U+0345, the modifier letters U+02B0...).
The rule skips case-ignorable characters before it asks whether one is cased, so such a character
acts as case-ignorable only, and the table calls it that; kCased is "cased and not case-ignorable".
The classes are Unicode's Cased and Case_Ignorable properties, which unicodedata does not give:
Case_Ignorable is close to the categories Mn, Me, Cf, Lm, Sk and the Word_Break classes MidLetter,
MidNumLet and Single_Quote (U+2027 HYPHENATION POINT among them), Cased to Lu, Ll, Lt and the
characters of Other_Lowercase and Other_Uppercase (U+00AA, U+24B6..., U+1F130...).

Both modes then check the tables: the lowercase they give (lower_from_tables, the steps of
g2c/rag/lowercase.cpp) against str.lower() on every code point x alone, in x + "Σ", "A" + x + "Σ"
and "AΣ" + x, and on random strings thick with Σ.
"""
from __future__ import annotations

import bisect
import os
import random
import sys
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(ROOT, "g2c", "rag", "lowercase_table.inc")
SURROGATES = range(0xD800, 0xE000)
CAPITAL_SIGMA, SMALL_SIGMA, FINAL_SIGMA = "\u03a3", "\u03c3", "\u03c2"
MAX_EXPANSION = 3
PER_LINE = 3
RANDOM_STRINGS = 20000
RANDOM_SEED = 17


def code_points() -> list[int]:
    """Every code point a valid UTF-8 text can hold."""
    return [c for c in range(0x110000) if c not in SURROGATES]


def lowercase_map() -> dict[int, tuple[int, ...]]:
    """Each code point whose str.lower() is something else, to the code points of that."""
    mapping = {}
    for c in code_points():
        lower = chr(c).lower()
        if lower != chr(c):
            assert 1 <= len(lower) <= MAX_EXPANSION, hex(c)
            mapping[c] = tuple(ord(x) for x in lower)
    return mapping


def lower_ranges(mapping: dict[int, tuple[int, ...]]) -> list[tuple[int, int, int, int]]:
    """The one-character mappings as runs {first, last, delta, stride} with stride 1 or 2.

    A run grows by the next mapped code point (in order) when it has the run's delta and lies the
    run's stride past its last, so every code point of the run off the stride maps to itself."""
    runs: list[list[int]] = []
    for c in sorted(mapping):
        if len(mapping[c]) != 1:
            continue
        delta = mapping[c][0] - c
        if runs and runs[-1][2] == delta:
            first, last, _, stride = runs[-1]
            gap = c - last
            if (first == last and gap in (1, 2)) or gap == stride:
                runs[-1] = [first, c, delta, gap]
                continue
        runs.append([c, c, delta, 1])
    return [tuple(run) for run in runs]  # type: ignore[misc]


def case_class(c: int) -> str | None:
    """kCased, kCaseIgnorable or None, as str.lower()'s final sigma rule sees the character."""
    x = chr(c)
    if (x + CAPITAL_SIGMA).lower()[-1] == FINAL_SIGMA:
        return "kCased"
    if ("A" + x + CAPITAL_SIGMA).lower()[-1] == FINAL_SIGMA:
        return "kCaseIgnorable"
    return None


def case_ranges() -> list[tuple[int, int, str]]:
    """Maximal runs of consecutive code points of one case class, in order."""
    runs: list[tuple[int, int, str]] = []
    for c in code_points():
        cls = case_class(c)
        if cls is None:
            continue
        if runs and runs[-1][2] == cls and runs[-1][1] == c - 1:
            runs[-1] = (runs[-1][0], c, cls)
        else:
            runs.append((c, c, cls))
    return runs


class Tables:
    """The three tables, and the lowercase they give (what g2c/rag/lowercase.cpp computes)."""

    def __init__(self) -> None:
        mapping = lowercase_map()
        self.lower_ranges = lower_ranges(mapping)
        self.expansions = {c: m for c, m in sorted(mapping.items()) if len(m) > 1}
        self.case_ranges = case_ranges()
        self._lower_firsts = [run[0] for run in self.lower_ranges]
        self._case_firsts = [run[0] for run in self.case_ranges]

    def lower_char(self, c: int) -> str:
        if c in self.expansions:
            return "".join(chr(m) for m in self.expansions[c])
        k = bisect.bisect_right(self._lower_firsts, c) - 1
        if k >= 0:
            first, last, delta, stride = self.lower_ranges[k]
            if c <= last and (c - first) % stride == 0:
                return chr(c + delta)
        return chr(c)

    def case_class(self, c: int) -> str | None:
        k = bisect.bisect_right(self._case_firsts, c) - 1
        if k >= 0 and c <= self.case_ranges[k][1]:
            return self.case_ranges[k][2]
        return None

    def is_final_sigma(self, text: str, i: int) -> bool:
        j = i
        while j > 0 and self.case_class(ord(text[j - 1])) == "kCaseIgnorable":
            j -= 1
        if j == 0 or self.case_class(ord(text[j - 1])) != "kCased":
            return False
        j = i + 1
        while j < len(text) and self.case_class(ord(text[j])) == "kCaseIgnorable":
            j += 1
        return j == len(text) or self.case_class(ord(text[j])) != "kCased"

    def lower_from_tables(self, text: str) -> str:
        out = []
        for i, x in enumerate(text):
            if x == CAPITAL_SIGMA:
                out.append(FINAL_SIGMA if self.is_final_sigma(text, i) else SMALL_SIGMA)
            else:
                out.append(self.lower_char(ord(x)))
        return "".join(out)


def random_strings(tables: Tables, count: int) -> list[str]:
    """Strings thick with Σ between cased, case-ignorable and other characters."""
    rng = random.Random(RANDOM_SEED)
    cased = [c for first, last, cls in tables.case_ranges if cls == "kCased"
             for c in range(first, last + 1)]
    ignorable = [c for first, last, cls in tables.case_ranges if cls == "kCaseIgnorable"
                 for c in range(first, last + 1)]
    everything = code_points()
    pools = [[ord(CAPITAL_SIGMA)], cased, ignorable, everything, [ord(" "), ord("'"), 0x0130]]
    weights = [4, 4, 3, 2, 1]
    strings = []
    for _ in range(count):
        length = rng.randint(1, 12)
        picks = rng.choices(pools, weights, k=length)
        strings.append("".join(chr(rng.choice(pool)) for pool in picks))
    return strings


def mismatches(tables: Tables) -> int:
    """How many texts lower_from_tables lowercases otherwise than str.lower()."""
    texts = random_strings(tables, RANDOM_STRINGS)
    for c in code_points():
        x = chr(c)
        texts += [x, x + CAPITAL_SIGMA, "A" + x + CAPITAL_SIGMA, "A" + CAPITAL_SIGMA + x]
    bad = [t for t in texts if tables.lower_from_tables(t) != t.lower()]
    for text in bad[:5]:
        print(f"gen-lowercase-table: {ascii(text)} -> {ascii(tables.lower_from_tables(text))}, "
              f"str.lower() gives {ascii(text.lower())}")
    return len(bad)


def hex5(c: int) -> str:
    return f"0x{c:05X}"


def render(tables: Tables) -> str:
    version = unicodedata.unidata_version
    lines = [
        "// Generated by scripts/gen_lowercase_table.py from Python's str.lower(), Unicode "
        f"{version}.",
        f"// kLowerRanges: {len(tables.lower_ranges)} runs {{first, last, delta, stride}} of "
        "one-character mappings; kLowerExpansions:",
        f"// the {len(tables.expansions)} mapping(s) to more characters; kCaseRanges: "
        f"{len(tables.case_ranges)} runs {{first, last, class}} of the",
        "// final sigma rule's classes. Each sorted by code point. Do not edit: rerun the script.",
        f'constexpr std::string_view kTableUnicodeVersion = "{version}";',
        "",
        "constexpr LowerRange kLowerRanges[] = {",
    ]
    entries = [f"{{{hex5(first)}, {hex5(last)}, {delta}, {stride}}},"
               for first, last, delta, stride in tables.lower_ranges]
    lines += [" ".join(entries[i:i + PER_LINE]) for i in range(0, len(entries), PER_LINE)]
    lines += ["};", "", "constexpr LowerExpansion kLowerExpansions[] = {"]
    for c, mapped in tables.expansions.items():
        padded = list(mapped) + [0] * (MAX_EXPANSION - len(mapped))
        lines.append(f"{{{hex5(c)}, {{{', '.join(hex5(m) for m in padded)}}}, {len(mapped)}}},")
    lines += ["};", "", "constexpr CaseRange kCaseRanges[] = {"]
    entries = [f"{{{hex5(first)}, {hex5(last)}, {cls}}},"
               for first, last, cls in tables.case_ranges]
    lines += [" ".join(entries[i:i + PER_LINE]) for i in range(0, len(entries), PER_LINE)]
    lines.append("};")
    return "\n".join(lines) + "\n"


def main() -> int:
    tables = Tables()
    bad = mismatches(tables)
    if bad:
        print(f"gen-lowercase-table: the tables lowercase {bad} texts otherwise than str.lower()")
        return 1
    text = render(tables)
    if sys.argv[1:] == ["--check"]:
        with open(OUTPUT, encoding="utf-8") as handle:
            same = handle.read() == text
        print("gen-lowercase-table: " + ("up to date" if same else
                                         f"{OUTPUT} differs (Unicode {unicodedata.unidata_version} "
                                         "here): rerun"))
        return 0 if same else 1
    with open(OUTPUT, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"gen-lowercase-table: wrote {OUTPUT} (Unicode {unicodedata.unidata_version})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
