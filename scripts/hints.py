#!/usr/bin/env python3
"""The hint ladders: one per student function, in hints/<topic>/<file>.md.

A ladder has three steps under the function's name, as the function's g2c::todo names it:

    ## Block::forward
    ### 1. The idea
    ...prose...
    ### 2. The steps
    ...prose, with the shapes...
    ### 3. The code
    ```cpp
    ...the function's body: C++ that compiles in place of its `throw g2c::todo(...)`...
    ```

Commands:
    hints.py show MODULE [FUNCTION] [--more | --code]   print a ladder, one step at a time
    hints.py check                                      every student function has a ladder
    hints.py apply DEST                                 write the student files with every
                                                        ladder's code pasted in under DEST
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COURSE = ROOT / "cmake" / "G2CCourse.cmake"
STEP_TITLES = ("1. The idea", "2. The steps", "3. The code")
TODO = re.compile(r'throw\s+g2c::todo\(\s*"([^"]+)"\s*,\s*"([^"]+)"\s*,\s*"([^"]+)"\s*\)\s*;')


@dataclass
class StudentFile:
    module: str  # "09"
    path: str  # "transformer/block": g2c/<path>.cpp, hints/<path>.md

    @property
    def source(self) -> Path:
        return ROOT / "g2c" / f"{self.path}.cpp"

    @property
    def ladder_file(self) -> Path:
        return ROOT / "hints" / f"{self.path}.md"


@dataclass
class Ladder:
    function: str
    steps: list[str] = field(default_factory=list)  # the three steps' text, in order
    code: str = ""  # the code block of step 3
    problems: list[str] = field(default_factory=list)


def course_files() -> list[StudentFile]:
    """The student files of cmake/G2CCourse.cmake, in course order."""
    files = []
    for line in COURSE.read_text().splitlines():
        # A numbered module ("09", "03b") or a Beyond one, by its slug ("muon").
        match = re.match(r'\s*"([0-9][0-9a-z]*|[a-z][a-z_]*)\s+[a-z_]+\s+([a-z_/]+)"', line)
        if match:
            files.append(StudentFile(match.group(1), match.group(2)))
    return files


def todos(source: Path) -> list[tuple[str, re.Match]]:
    """(function name, the match of its `throw g2c::todo(...);`) for each TODO of a file."""
    text = source.read_text()
    return [(m.group(1), m) for m in TODO.finditer(text)]


def read_ladders(path: Path) -> dict[str, Ladder]:
    """The ladders of one hints file, by function name."""
    ladders: dict[str, Ladder] = {}
    if not path.exists():
        return ladders
    lines: dict[str, list[list[str]]] = {}  # each function's steps, as lines
    current: str | None = None
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            ladders[current] = Ladder(current)
            lines[current] = []
        elif line.startswith("### ") and current is not None:
            title, steps = line[4:].strip(), lines[current]
            expected = STEP_TITLES[len(steps)] if len(steps) < 3 else None
            if title != expected:
                ladders[current].problems.append(
                    f"step heading {title!r} where {expected!r} was expected")
            steps.append([])
        elif current is not None and lines[current]:
            lines[current][-1].append(line)
    for name, steps in lines.items():
        ladders[name].steps = ["\n".join(step).strip() for step in steps]
    for ladder in ladders.values():
        if len(ladder.steps) != 3:
            ladder.problems.append(f"{len(ladder.steps)} steps, not 3")
            continue
        blocks = re.findall(r"```cpp\n(.*?)```", ladder.steps[2], flags=re.S)
        if len(blocks) != 1:
            ladder.problems.append(f"step 3 has {len(blocks)} ```cpp blocks, not 1")
        else:
            ladder.code = blocks[0]
        for number, text in enumerate(ladder.steps[:2], start=1):
            if not text or "```" in text:
                ladder.problems.append(f"step {number} must be prose (no code block) and not empty")
    return ladders


def module_files(module: str) -> list[StudentFile]:
    wanted = module.lower().lstrip("0") or "0"
    files = [f for f in course_files() if f.module.lstrip("0") == wanted]
    if not files:
        modules = sorted({f.module for f in course_files()})
        sys.exit(f"no student files in module {module!r}; modules: {', '.join(modules)}")
    return files


def cmd_show(args: argparse.Namespace) -> int:
    files = module_files(args.module)
    # The ladders name the functions (a function you have written has no TODO left to find).
    functions = [(f, name) for f in files
                 for name in (read_ladders(f.ladder_file) or dict(todos(f.source)))]
    if not args.function:
        print(f"Module {files[0].module}: the functions you write, and their hints")
        for f, name in functions:
            print(f"  {name:<44} g2c/{f.path}.cpp")
        print(f"\nscripts/hint.sh {files[0].module} FUNCTION          the idea")
        print(f"scripts/hint.sh {files[0].module} FUNCTION --more   the steps, with their shapes")
        print(f"scripts/hint.sh {files[0].module} FUNCTION --code   the code")
        return 0
    wanted = args.function
    found = [(f, n) for f, n in functions if n == wanted]
    if not found:
        found = [(f, n) for f, n in functions if n.split("::")[-1] == wanted or wanted in n]
    if len(found) != 1:
        names = ", ".join(n for _, n in (found or functions))
        what = "several functions match" if found else "no function of this module matches"
        print(f"{what} {wanted!r}: {names}", file=sys.stderr)
        return 2
    f, name = found[0]
    ladder = read_ladders(f.ladder_file).get(name)
    if ladder is None or len(ladder.steps) != 3:
        print(f"no hints for {name} yet in hints/{f.path}.md", file=sys.stderr)
        return 2
    shown = 3 if args.code else 2 if args.more else 1
    print(f"{name} — g2c/{f.path}.cpp (module {f.module})\n")
    for number in range(shown):
        print(f"{STEP_TITLES[number]}\n\n{ladder.steps[number]}\n")
    if shown < 3:
        flag = "--more" if shown == 1 else "--code"
        print(f"(more: scripts/hint.sh {f.module} {name} {flag})")
    return 0


def cmd_check(_: argparse.Namespace) -> int:
    problems, count = [], 0
    for f in course_files():
        names = [name for name, _ in todos(f.source)]
        ladders = read_ladders(f.ladder_file)
        for name in names:
            count += 1
            if name not in ladders:
                problems.append(f"hints/{f.path}.md: no ladder for {name} (g2c/{f.path}.cpp)")
                continue
            problems += [f"hints/{f.path}.md: {name}: {p}" for p in ladders[name].problems]
        for name in sorted(set(ladders) - set(names)):
            problems.append(f"hints/{f.path}.md: {name} is no student function of g2c/{f.path}.cpp")
    if problems:
        print("\n".join(problems))
    failed = min(len(problems), count)
    print(f"checks: {count - failed} passed, {failed} failed, 0 skipped")
    return 1 if problems else 0


def cmd_apply(args: argparse.Namespace) -> int:
    """Rewrites each student file under DEST with its ladders' code in place of the TODOs."""
    dest = Path(args.dest)
    for f in course_files():
        target = dest / "g2c" / f"{f.path}.cpp"
        text = target.read_text()
        ladders = read_ladders(f.ladder_file)
        for match in reversed(list(TODO.finditer(text))):
            ladder = ladders.get(match.group(1))
            if ladder is None or not ladder.code:
                sys.exit(f"hints/{f.path}.md: no code for {match.group(1)}")
            indent = " " * (match.start() - text.rfind("\n", 0, match.start()) - 1)
            body = "\n".join((indent + line) if line.strip() else ""
                             for line in ladder.code.rstrip("\n").splitlines())
            text = text[:match.start()] + body.lstrip() + text[match.end():]
        target.write_text(text)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("show", help="print a function's hints, one step at a time")
    show.add_argument("module", help="the module: 01, 02, 03, 03b, …, 11")
    show.add_argument("function", nargs="?", help="e.g. Block::forward (or forward); none: list")
    level = show.add_mutually_exclusive_group()
    level.add_argument("--more", action="store_true", help="also the steps, with their shapes")
    level.add_argument("--code", action="store_true", help="all three steps, the code last")
    commands.add_parser("check", help="every student function has a three-step ladder")
    apply = commands.add_parser("apply", help="paste every ladder's code into a copy of the tree")
    apply.add_argument("dest", help="the root of a copy of the repository")
    args = parser.parse_args()
    return {"show": cmd_show, "check": cmd_check, "apply": cmd_apply}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
