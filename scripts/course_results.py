#!/usr/bin/env python3
"""Reads CTest results of a g2c build: the scaffold invariant, the all-pass check, and grading.

    course_results.py run BUILD JUNIT [ctest args...]   run ctest, writing JUnit XML
    course_results.py scaffold BUILD JUNIT               check the student build's invariant
                                                         (course tests and checks)
    course_results.py all-pass BUILD JUNIT [--label L]   every test (with label L) passed or was
                                                         skipped
    course_results.py grade BUILD JUNIT OUTDIR [--count-scaffold]
                                                         per-module table, results.json: one point
                                                         per test a student's code turns green;
                                                         --count-scaffold also scores the tests
                                                         that pass on the day-one scaffold

Labels come from `ctest --show-only=json-v1`; outcomes and output from the JUnit file that
`ctest --output-junit` writes. Standard library only, so any Python 3 runs it.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import OrderedDict
from dataclasses import dataclass, field

SKIP_MARK = "G2C_SKIPPED"
TODO_MARK = "NotImplementedError"


@dataclass
class Test:
    name: str
    labels: list = field(default_factory=list)
    status: str = "missing"  # passed, failed, skipped, missing
    output: str = ""

    @property
    def module(self):
        return self.name.split(".", 1)[0]


def ctest_labels(build):
    listing = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                             check=True, capture_output=True, text=True).stdout
    tests = OrderedDict()
    for entry in json.loads(listing).get("tests", []):
        labels = []
        for prop in entry.get("properties", []):
            if prop.get("name") == "LABELS":
                labels = list(prop.get("value", []))
        tests[entry["name"]] = Test(entry["name"], labels)
    return tests


def read_junit(path, tests):
    root = ET.parse(path).getroot()
    for case in root.iter("testcase"):
        name = case.get("name")
        test = tests.setdefault(name, Test(name))
        output = "".join(node.text or "" for node in case.iter("system-out"))
        test.output = output
        if case.find("skipped") is not None or case.get("status") == "notrun":
            test.status = "skipped"
        elif case.find("failure") is not None or case.find("error") is not None or case.get("status") == "fail":
            test.status = "failed"
        else:
            test.status = "passed"
        if SKIP_MARK in output and test.status != "failed":
            test.status = "skipped"
    return tests


def load(build, junit):
    return read_junit(junit, ctest_labels(build))


def command_run(build, junit, extra):
    os.makedirs(os.path.dirname(os.path.abspath(junit)), exist_ok=True)
    result = subprocess.run(["ctest", "--test-dir", build, "--output-junit", os.path.abspath(junit),
                             "--no-tests=error", *extra])
    return result.returncode


def command_scaffold(build, junit):
    """Course tests: clean ones pass, the others fail with NotImplementedError (accelerator checks
    may skip without a GPU). Checks (label "check", the framework tests): each passes, skips, or
    fails with NotImplementedError; never another failure."""
    tests = load(build, junit)
    course = [t for t in tests.values() if "course" in t.labels]
    checks = [t for t in tests.values() if "check" in t.labels and "course" not in t.labels]
    problems = []

    def tail(test):
        return " | ".join(test.output.strip().splitlines()[-3:])

    for test in course:
        if "clean" in test.labels:
            if test.status not in ("passed", "skipped"):
                problems.append(f"{test.name}: tagged clean but {test.status} on the scaffold")
        elif test.status == "passed":
            problems.append(f"{test.name}: passes on the scaffold but is not tagged clean")
        elif test.status == "failed" and TODO_MARK not in test.output:
            problems.append(f"{test.name}: fails for another reason than NotImplementedError: {tail(test)}")
        elif test.status == "skipped" and "accelerator" in test.labels:
            pass  # an accelerator check on a machine without CUDA or MPS
        elif test.status in ("skipped", "missing"):
            problems.append(f"{test.name}: {test.status} on the scaffold (expected a TODO failure)")
    for test in checks:
        if test.status == "missing":
            problems.append(f"{test.name}: check registered but not run")
        elif test.status == "failed" and TODO_MARK not in test.output:
            problems.append(f"{test.name}: check fails for another reason than NotImplementedError: "
                            f"{tail(test)}")

    def counts_of(group):
        by_module = OrderedDict()
        for test in group:
            counts = by_module.setdefault(test.module, {"passed": 0, "failed": 0, "skipped": 0, "missing": 0})
            counts[test.status] += 1
        return by_module

    for module, counts in counts_of(course).items():
        print(f"  scaffold {module}: {counts['passed']} passed, {counts['failed']} failed (all TODOs), "
              f"{counts['skipped']} skipped")
    for module, counts in counts_of(checks).items():
        print(f"  scaffold {module} checks: {counts['passed']} passed, {counts['failed']} failed "
              f"(all TODOs), {counts['skipped']} skipped")
    for problem in problems:
        print(f"  SCAFFOLD: {problem}")
    total = len(course) + len(checks)
    print(f"scaffold-checks: {total - len(problems)} passed, {len(problems)} failed")
    return 1 if problems or not course else 0


def command_all_pass(build, junit, label=None):
    tests = {name: t for name, t in load(build, junit).items() if label is None or label in t.labels}
    counts = {"passed": 0, "failed": 0, "skipped": 0, "missing": 0}
    for test in tests.values():
        counts[test.status] += 1
        if test.status in ("failed", "missing"):
            print(f"  FAILED: {test.name}")
    print(f"tests: {counts['passed']} passed, {counts['failed'] + counts['missing']} failed, "
          f"{counts['skipped']} skipped")
    return 1 if counts["failed"] or counts["missing"] or not tests else 0


def command_grade(build, junit, out_dir, count_scaffold=False):
    """One point per course test the student's code turns green. Tests labelled "clean" pass on the
    untouched scaffold (they check what is provided, or that a stub has the right shape), so they
    earn nothing unless count_scaffold: they are shown in their own column and listed in
    results.json with max_score 0."""
    tests = [t for t in load(build, junit).values() if "course" in t.labels]
    if not tests:
        print("grade: no course tests found; build the project first", file=sys.stderr)
        return 1
    modules = OrderedDict()
    results = []
    for test in sorted(tests, key=lambda t: t.name):
        row = modules.setdefault(test.module, {"passed": 0, "total": 0, "given": 0, "given_total": 0})
        passed = test.status == "passed"
        if test.status == "skipped":
            results.append({"name": test.name, "score": 0, "max_score": 0, "status": "passed",
                            "output": "skipped on this machine: " + test.output.strip()[-500:]})
            continue
        if "clean" in test.labels and not count_scaffold:
            row["given_total"] += 1
            row["given"] += int(passed)
            results.append({"name": test.name, "score": 0, "max_score": 0,
                            "status": "passed" if passed else "failed",
                            "output": "passes on the day-one scaffold: not scored"
                            + ("" if passed else "; it fails now: " + test.output.strip()[-1500:])})
            continue
        row["total"] += 1
        row["passed"] += int(passed)
        results.append({"name": test.name, "score": 1 if passed else 0, "max_score": 1,
                        "status": "passed" if passed else "failed",
                        "output": "" if passed else test.output.strip()[-2000:]})
    scored = "course test" if count_scaffold else "test your code turns green"
    print(f"{'module':<8}{'passed/total':>14}{'points':>10}{'scaffold (not scored)':>24}")
    total_passed = total = given = given_total = 0
    for module, row in modules.items():
        total_passed += row["passed"]
        total += row["total"]
        given += row["given"]
        given_total += row["given_total"]
        scaffold = f"{row['given']}/{row['given_total']}" if row["given_total"] else "-"
        print(f"{module:<8}{row['passed']:>7}/{row['total']:<6}{row['passed']:>10}{scaffold:>24}")
    percent = 100.0 * total_passed / total if total else 0.0
    scaffold = f"{given}/{given_total}" if given_total else "-"
    print(f"{'total':<8}{total_passed:>7}/{total:<6}{total_passed:>10}{scaffold:>24}")
    print(f"score {total_passed}/{total} ({percent:.0f} %): one point per {scored}")
    os.makedirs(out_dir, exist_ok=True)
    document = {"score": total_passed, "max_score": total, "tests": results,
                "leaderboard": [], "visibility": "visible"}
    handle, temporary = tempfile.mkstemp(dir=out_dir, suffix=".json")
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        json.dump(document, stream, indent=2)
    mask = os.umask(0)  # mkstemp makes the file 0600; the result is for others to read too
    os.umask(mask)
    os.chmod(temporary, 0o666 & ~mask)
    os.replace(temporary, os.path.join(out_dir, "results.json"))
    print(f"wrote {os.path.join(out_dir, 'results.json')} and {junit}")
    return 0


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    command, build, junit = argv[0], argv[1], argv[2]
    if command == "run":
        return command_run(build, junit, argv[3:])
    if command == "scaffold":
        return command_scaffold(build, junit)
    if command == "all-pass" and len(argv) in (3, 5) and argv[3:4] in ([], ["--label"]):
        return command_all_pass(build, junit, argv[4] if len(argv) == 5 else None)
    if command == "grade" and len(argv) in (4, 5) and argv[4:] in ([], ["--count-scaffold"]):
        return command_grade(build, junit, argv[3], count_scaffold=len(argv) == 5)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
