#!/usr/bin/env python3
"""Checks the course tests against tests/course_tests.txt, and that list against the Python edition.

    check_course_tests.py BUILD [BUILD...]

1. In every build, each module's registered course tests (CTest label "course", names
   "<module>.<test>") are exactly the manifest's for that module: the same names, each with its
   status (label "clean", label "accelerator", or neither: "todo"). A module the build does not
   have is skipped with a note; a registered module missing from the manifest is an error.
2. When the Python edition's test names are reachable ($G2C_SPEC_DIR/python-test-names.md,
   python-test-names-next.md and python-test-names-phase5.md, default ../shared/spec beside the
   repository), every Python name of a module in the manifest is listed there as "python", and
   every "python" entry is a Python name: a renamed test fails. A module whose section says
   "partial" ("[16] tests/test_inference.cpp partial") is being written: its names must all be
   Python names, and the ones still to come are counted, not failed.

Standard library only. The last line reads "course-tests: N checked, M problems".
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import OrderedDict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "tests", "course_tests.txt")
STATUSES = ("clean", "todo", "accelerator")
PARTIAL = set()  # modules whose Python tests are not all written yet (a section marked "partial")
ORIGINS = ("python", "cpp")


def read_manifest(path):
    modules = OrderedDict()
    problems = []
    module = None
    for number, raw in enumerate(open(path, encoding="utf-8"), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        section = re.fullmatch(r"\[(\w+)\]\s+\S+(\s+partial)?", line)
        if section:
            module = section.group(1)
            modules.setdefault(module, OrderedDict())
            if section.group(2):
                PARTIAL.add(module)
            continue
        fields = line.split()
        if module is None or len(fields) != 3 or fields[1] not in STATUSES or fields[2] not in ORIGINS:
            problems.append(f"{os.path.relpath(path, ROOT)}:{number}: expected '<name> "
                            f"<{'|'.join(STATUSES)}> <{'|'.join(ORIGINS)}>' in a [module] section, "
                            f"got {raw.strip()!r}")
            continue
        name, status, origin = fields
        if name in modules[module]:
            problems.append(f"{os.path.relpath(path, ROOT)}:{number}: {module}.{name} is listed twice")
        modules[module][name] = (status, origin)
    return modules, problems


def registered_course_tests(build):
    listing = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], check=True,
                             capture_output=True, text=True).stdout
    modules = OrderedDict()
    for entry in json.loads(listing).get("tests", []):
        labels = []
        for prop in entry.get("properties", []):
            if prop.get("name") == "LABELS":
                labels = list(prop.get("value", []))
        if "course" not in labels:
            continue
        module, _, name = entry["name"].partition(".")
        status = "clean" if "clean" in labels else "accelerator" if "accelerator" in labels else "todo"
        modules.setdefault(module, OrderedDict())[name] = status
    return modules


def read_python_names(path):
    text = open(path, encoding="utf-8").read()
    modules = OrderedDict()
    for match in re.finditer(r"^## (\w+) — tests/\S+.*?\n```text\n(.*?)```", text, re.S | re.M):
        # Module names compare in lower case: the names file writes "09B", the manifest "09b".
        modules[match.group(1).lower()] = [line.split()[0] for line in match.group(2).splitlines() if line.strip()]
    return modules


def read_phase5_names(path, problems):
    """python-test-names-phase5.md: "## [16] tests/test_inference.py @ … (N tests)", then one
    "Class::test_name" (or "test_name") per line, a parametrized test followed by a note
    ("test_name [parametrized: …]": one course test, its cases as sections); the names come back
    without "test_"."""
    modules = OrderedDict()
    module = None
    sections = []  # (module, the header's count, the names read under it)
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        header = re.match(r"^## \[([\w-]+)\] (tests/\S+).*\((\d+) tests\)", line)
        if header:
            # A Beyond section ("[beyond-muon]") is the module of that slug ("[muon]").
            module = header.group(1).lower().removeprefix("beyond-")
            modules.setdefault(module, [])
            sections.append((header.group(2), int(header.group(3)), []))
            continue
        if line.startswith("#") or line.startswith("Summary"):
            module = None if line.startswith("Summary") else module
            continue
        name = re.fullmatch(r"(?:(\w+)::)?test_(\w+)(?:\s+\[parametrized:[^\]]*\])?", line)
        if module is not None and name:
            modules[module].append(f"{name.group(1)}::{name.group(2)}" if name.group(1)
                                   else name.group(2))
            sections[-1][2].append(line)
    # Every test its header counts is read: a name in a format this reader misses is reported,
    # not dropped.
    for test_file, count, read in sections:
        if len(read) != count:
            problems.append(f"{path}: {test_file} lists {count} tests, {len(read)} were read")
    return modules


def check_build(build, manifest, problems):
    registered = registered_course_tests(build)
    if not registered:
        problems.append(f"{build}: no course tests registered (is it built?)")
    checked = 0
    for module, tests in registered.items():
        listed = manifest.get(module)
        if listed is None:
            problems.append(f"{build}: module {module} has course tests but no section in "
                            f"tests/course_tests.txt")
            continue
        for name, status in tests.items():
            checked += 1
            if name not in listed:
                problems.append(f"{build}: {module}.{name} is registered but not in "
                                f"tests/course_tests.txt (renamed? an addition needs a line there)")
            elif listed[name][0] != status:
                problems.append(f"{build}: {module}.{name} is registered as {status}, "
                                f"tests/course_tests.txt says {listed[name][0]}")
        for name in listed:
            if name not in tests:
                problems.append(f"{build}: {module}.{name} is in tests/course_tests.txt but not "
                                f"registered (renamed or removed?)")
        counts = {s: sum(1 for v in tests.values() if v == s) for s in STATUSES}
        print(f"  {build} {module}: {len(tests)} course tests ({counts['clean']} clean, "
              f"{counts['todo']} todo, {counts['accelerator']} accelerator) match the manifest")
    for module in manifest:
        if module not in registered:
            print(f"  {build} {module}: not built here; its {len(manifest[module])} listed tests "
                  f"are checked once they are")
    return checked


def check_python_names(manifest, problems):
    spec_dir = os.environ.get("G2C_SPEC_DIR", os.path.join(ROOT, "..", "shared", "spec"))
    path = os.path.join(spec_dir, "python-test-names.md")
    if not os.path.isfile(path):
        print(f"  python names: {path} not found (set G2C_SPEC_DIR); name check skipped")
        return 0
    python = read_python_names(path)
    # The newer modules (01, 02, 13, ...) and the tests a module gained later (11's best-of-n),
    # listed after the ones it already had.
    newer = os.path.join(spec_dir, "python-test-names-next.md")
    if os.path.isfile(newer):
        for module, names in read_python_names(newer).items():
            known = python.setdefault(module, [])
            known.extend(name for name in names if name not in known)
    # Modules 16-20 and Beyond, in their own format.
    phase5 = os.path.join(spec_dir, "python-test-names-phase5.md")
    if os.path.isfile(phase5):
        for module, names in read_phase5_names(phase5, problems).items():
            known = python.setdefault(module, [])
            known.extend(name for name in names if name not in known)
    checked = 0
    for module, names in python.items():
        listed = manifest.get(module)
        if listed is None:
            print(f"  python names {module}: not part of this edition yet ({len(names)} tests)")
            continue
        to_come = 0
        for name in names:
            checked += 1
            if name not in listed:
                if module in PARTIAL:
                    to_come += 1
                    continue
                problems.append(f"python name {module}.{name} has no course test of that name in "
                                f"tests/course_tests.txt")
            elif listed[name][1] != "python":
                problems.append(f"{module}.{name} is a Python name but marked cpp")
        for name, (_, origin) in listed.items():
            if origin == "python" and name not in names:
                problems.append(f"{module}.{name} is marked python but the Python edition has no "
                                f"test of that name")
        additions = sum(1 for _, origin in listed.values() if origin == "cpp")
        present = (f"{len(names) - to_come} of {len(names)} present, {to_come} to come (partial)"
                   if module in PARTIAL else f"all {len(names)} present")
        print(f"  python names {module}: {present}"
              + (f", plus {additions} of this edition" if additions else ""))
    return checked


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    manifest, problems = read_manifest(MANIFEST)
    checked = 0
    for build in argv:
        checked += check_build(build, manifest, problems)
    checked += check_python_names(manifest, problems)
    for problem in problems:
        print(f"  COURSE-TESTS: {problem}")
    print(f"course-tests: {checked} checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
