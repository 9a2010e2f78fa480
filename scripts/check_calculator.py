#!/usr/bin/env python3
"""Module 18's calculator against Python's own arithmetic: the same expression, the same answer.

  python3 scripts/check_calculator.py [build dir] [--count N] [--seed S]   (default build/reference)

The C++ side is calculator_evaluate (tests/tools/calculator_eval.cpp, one expression per line in,
one JSON answer per line out). The Python side parses each expression with Python's own parser
(ast) and evaluates it node by node with Python's own operators — the oracle for precedence,
associativity, // and % on negative numbers, float formatting (str()) and division by zero. Where
the two are allowed to differ, the script says so and checks the reason:
  - the calculator's integers are 64-bit: where any intermediate integer of Python's evaluation
    leaves [-2**63, 2**63), the calculator must refuse with a ToolError that says "64-bit";
  - a float that overflows (OverflowError in Python, or a finite operation giving inf) and a power
    whose result is complex must be ToolErrors too.
Expressions: N random ones (default 20,000, seeded) over numbers of every form the calculator
reads (1_000, .5, 2., 1e-3), + - * / // % **, unary signs and parentheses, with random spacing;
then a fixed list of things that are not arithmetic (names, calls, strings, attributes, subscripts,
comparisons, lambdas, walrus, bitwise operators, syntax errors), every one of which must be a
ToolError. Exits 1 on the first kind of mismatch, listing up to ten examples.
"""
import argparse
import ast
import json
import math
import operator
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INT_MIN, INT_MAX = -(2**63), 2**63 - 1

BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
          ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
          ast.Pow: operator.pow}
UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}

NOT_ARITHMETIC = [
    "x + 1", "abs(-1)", "(1).bit_length()", "(1).__class__", "'hello'", '"hi" * 2', "True",
    "False + 1", "None", "[1, 2, 3][0]", "1 < 2", "1 == 1", "(lambda x: x)(1)", "not 0", "~5",
    "5 @ 3", "1 +", "(x := 5)", "__import__('os')", "1 & 3", "1 | 2", "1 ^ 2", "1 << 2", "2 >> 1",
    "1 if 1 else 2", "{1: 2}", "{1, 2}", "(1, 2)", "1,", "[x for x in ()]", "1;2", "2 ** ", "()",
    "1 2", "(1 + 2", "1 + 2)", "", "   ", "0x10", "1j", "1 + 2j", "007", "1__000", "1e", "é + 1",
    "await 1", "yield 1", "*1", "1 +* 2", "sum([1])", "os.system('ls')",
]


class Overflow(Exception):
    """An intermediate integer beyond 64 bits."""


def evaluate(node):
    """Python's value of an arithmetic AST, with every integer checked against 64 bits."""
    if isinstance(node, ast.Expression):
        return evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        value = node.value
    elif isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        left, right = evaluate(node.left), evaluate(node.right)
        # An integer power past 2**63 is an overflow whatever its exact value: say so before
        # computing it (10 ** 2 ** 27 would take Python minutes).
        if (type(node.op) is ast.Pow and isinstance(left, int) and isinstance(right, int)
                and abs(left) > 1 and right > 0 and right * math.log2(abs(left)) > 64):
            raise Overflow()
        value = BINARY[type(node.op)](left, right)
    elif isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
        value = UNARY[type(node.op)](evaluate(node.operand))
    else:
        raise TypeError(f"not arithmetic: {type(node).__name__}")
    if isinstance(value, int) and not INT_MIN <= value <= INT_MAX:
        raise Overflow()
    return value


def number(rng):
    kind = rng.random()
    if kind < 0.45:
        return str(rng.randint(0, 30))
    if kind < 0.55:
        return str(rng.randint(10**5, 10**9))
    if kind < 0.62:
        return f"{rng.randint(1, 9)}_{rng.randint(0, 999):03d}"
    if kind < 0.8:
        return f"{rng.uniform(0, 100):.{rng.randint(1, 3)}f}"
    if kind < 0.86:
        return "." + str(rng.randint(1, 99))
    if kind < 0.9:
        return str(rng.randint(1, 99)) + "."
    return f"{rng.randint(1, 9)}e{rng.choice(['', '-', '+'])}{rng.randint(0, 5)}"


def expression(rng, depth):
    if depth == 0 or rng.random() < 0.25:
        text = number(rng)
    elif rng.random() < 0.15:
        text = rng.choice(["-", "+", "- -"]) + " " * rng.randint(0, 1) + expression(rng, depth - 1)
    else:
        op = rng.choice(["+", "-", "*", "/", "//", "%", "**", "+", "*", "-"])
        left = expression(rng, depth - 1)
        # Small exponents keep most powers inside 64 bits; some still overflow, on purpose.
        right = (rng.choice(["2", "3", "-1", "0.5", "0", "10", "-2", "(1 + 1)"]) if op == "**"
                 else expression(rng, depth - 1))
        text = left + " " * rng.randint(0, 2) + op + " " * rng.randint(0, 2) + right
    return f"({text})" if rng.random() < 0.3 else text


def python_answer(text):
    """("value", str, is_int) | ("ZeroDivisionError",) | ("ToolError", reason)."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return ("ToolError", "syntax")
    try:
        value = evaluate(tree)
    except ZeroDivisionError:
        return ("ZeroDivisionError",)
    except Overflow:
        return ("ToolError", "64-bit")
    except OverflowError:
        return ("ToolError", "overflow")
    except TypeError:
        return ("ToolError", "not arithmetic")
    if isinstance(value, complex):
        return ("ToolError", "complex")
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return ("ToolError", "overflow")
    return ("value", str(value), isinstance(value, int))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build", "reference"))
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    binary = os.path.join(args.build, "bin", "calculator_eval")
    if not os.path.exists(binary):
        sys.exit(f"{binary} is missing: cmake --build {args.build} --target calculator_eval")

    rng = random.Random(args.seed)
    generated = [expression(rng, rng.randint(1, 4)) for _ in range(args.count)]
    texts = generated + NOT_ARITHMETIC
    reply = subprocess.run([binary], input="\n".join(texts) + "\n", capture_output=True,
                           text=True, check=True).stdout.splitlines()
    if len(reply) != len(texts):
        sys.exit(f"calculator_eval answered {len(reply)} lines for {len(texts)} expressions")

    problems, counts = [], {"value": 0, "ZeroDivisionError": 0, "ToolError": 0}
    for index, (text, line) in enumerate(zip(texts, reply)):
        cpp = json.loads(line)
        expected = ("ToolError", "not arithmetic") if index >= len(generated) else python_answer(text)
        counts[expected[0]] += 1
        if expected[0] == "value":
            ok = cpp.get("value") == expected[1] and cpp.get("integer") == expected[2]
        elif expected[0] == "ZeroDivisionError":
            ok = cpp.get("error") == "ZeroDivisionError"
        else:
            ok = cpp.get("error") == "ToolError" and (
                expected[1] != "64-bit" or "64-bit" in cpp.get("message", ""))
        if not ok:
            problems.append(f"  {text!r}: Python {expected}, C++ {cpp}")
    print(f"calculator vs Python: {len(texts)} expressions ({counts['value']} values, "
          f"{counts['ZeroDivisionError']} divisions by zero, {counts['ToolError']} refusals), "
          f"{len(problems)} mismatches")
    for problem in problems[:10]:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
