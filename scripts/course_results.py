#!/usr/bin/env python3
"""Reads CTest results of a g2c build: the scaffold invariant, the all-pass check, and grading.

    course_results.py run BUILD JUNIT [-L REGEX] [-j N] [--per-test]
                                                         run the tests, writing JUnit XML
    course_results.py scaffold BUILD JUNIT               check the student build's invariant
                                                         (course tests and checks)
    course_results.py all-pass BUILD JUNIT [--label L]   every test (with label L) passed or was
                                                         skipped
    course_results.py grade BUILD JUNIT OUTDIR [--count-scaffold]
                                                         per-module table, results.json: one point
                                                         per test a student's code turns green;
                                                         --count-scaffold also scores the tests
                                                         that pass on the day-one scaffold

Labels come from `ctest --show-only=json-v1`; outcomes and output from a JUnit file in the shape
`ctest --output-junit` writes. `run` starts each test program once for all of its selected tests
(Catch2's XML reporter says how each went), N programs at a time: a process a test, as ctest
runs them, spends most of its time loading LibTorch (0.2-0.3 s a start, about 2,000 tests).
Tests a program did not report on (it crashed, or ran past its time) run again one process each,
as ctest would, so one broken test costs only itself. `--per-test` runs everything through ctest.
Standard library only, so any Python 3 runs it.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
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


def ctest_listing(build, label_regex=None):
    """The tests ctest knows in `build` (those with a label matching `label_regex`), as
    `ctest --show-only=json-v1` describes them: name, command, properties."""
    args = ["ctest", "--test-dir", build, "--show-only=json-v1"]
    if label_regex:
        args += ["-L", label_regex]
    listing = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(listing).get("tests", [])


def test_property(entry, name, default=None):
    return next((p.get("value") for p in entry.get("properties", []) if p.get("name") == name),
                default)


def ctest_labels(build):
    tests = OrderedDict()
    for entry in ctest_listing(build):
        tests[entry["name"]] = Test(entry["name"], list(test_property(entry, "LABELS", [])))
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


PROGRAM_TIMEOUT = 1500  # seconds for one program's whole run, ctest's default for one test


@dataclass
class Registered:
    """A test as ctest knows it: its name, its program, its Catch2 test spec, where it runs."""
    name: str
    program: str
    spec: str
    directory: str


def registered_tests(build, label_regex=None):
    tests = []
    for entry in ctest_listing(build, label_regex):
        command = entry.get("command", [])
        directory = test_property(entry, "WORKING_DIRECTORY", build)
        if len(command) != 2:  # ctest's stand-in for a test program that was not built
            command = [command[0] if command else "", entry["name"]]
        tests.append(Registered(entry["name"], command[0], command[1], directory))
    return tests


def catch_name(spec):
    """The test case's name from its Catch2 test spec (catch_discover_tests escapes , [ ] \\)."""
    return re.sub(r"\\(.)", r"\1", spec)


def case_output(case):
    """A Catch2 XML <TestCase> as its console report reads: each failed check with its expansion,
    each exception, the messages, then what the test printed."""
    lines = []
    for node in case.iter():
        if node.tag == "Expression" and node.get("success") == "false":
            original = (node.findtext("Original") or "").strip()
            expanded = (node.findtext("Expanded") or "").strip()
            lines.append(f"{node.get('filename')}:{node.get('line')}: FAILED:")
            lines.append(f"  {node.get('type', 'CHECK')}( {original} )")
            if expanded and expanded != original:
                lines += ["with expansion:", f"  {expanded}"]
        elif node.tag == "Exception":
            lines.append(f"{node.get('filename')}:{node.get('line')}: FAILED:")
            lines += ["due to unexpected exception with message:", f"  {(node.text or '').strip()}"]
        elif node.tag in ("Info", "Warning"):
            lines.append(f"with message:\n  {(node.text or '').strip()}")
        elif node.tag in ("StdOut", "StdErr") and (node.text or "").strip():
            lines.append(node.text.strip())
        elif node.tag == "FatalErrorCondition":
            lines.append(f"FAILED: fatal error condition: {(node.text or '').strip()}")
    return "\n".join(lines)


def run_program(program, directory, tests, everything):
    """Runs `program` once for `tests` (all its tests when `everything`); returns {test name:
    (passed, output)} for the tests it reported on, and what it printed besides."""
    by_case = {catch_name(t.spec): t for t in tests}
    # The report goes to a file of its own: what the code under test prints (printf, fmt) cannot
    # land inside it.
    handle, report_path = tempfile.mkstemp(suffix=".xml")
    os.close(handle)
    command = [program, "-r", "xml", "-o", report_path]
    command += [] if everything else [t.spec for t in tests]
    try:
        finished = subprocess.run(command, cwd=directory, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, errors="replace",
                                  timeout=PROGRAM_TIMEOUT)
        note = finished.stderr if finished.returncode >= 0 else f"killed by signal {-finished.returncode}"
    except subprocess.TimeoutExpired:
        note = f"timed out after {PROGRAM_TIMEOUT} s"
    with open(report_path, encoding="utf-8", errors="replace") as stream:
        report = stream.read()
    os.unlink(report_path)
    results = {}
    parser = ET.XMLPullParser(events=("end",))
    try:
        parser.feed(report)
        for _, node in parser.read_events():
            if node.tag != "TestCase":
                continue
            test = by_case.get(node.get("name"))
            overall = node.find("OverallResult")
            if test is not None and overall is not None:
                results[test.name] = (overall.get("success") == "true", case_output(node))
    except ET.ParseError:
        pass  # a report cut short (a crash): the cases read so far stand
    return results, note


def run_alone(test):
    """One test in its own process, as ctest runs it: (passed, output)."""
    try:
        finished = subprocess.run([test.program, test.spec], cwd=test.directory,
                                  capture_output=True, text=True, errors="replace",
                                  timeout=PROGRAM_TIMEOUT)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {PROGRAM_TIMEOUT} s"
    output = finished.stdout + finished.stderr
    if finished.returncode < 0:
        output += f"\n(killed by signal {-finished.returncode})"
    return finished.returncode == 0, output


def run_tests_of(program, directory, chosen, everything):
    """`chosen` (all of the program's tests when `everything`) in as few runs of `program` as
    crashes allow: {test name: (passed, output)}, and a note for each run that ended early."""
    if not os.access(program, os.X_OK):
        return {t.name: (False, f"{program} is not built (cmake --build the build first)")
                for t in chosen}, [f"{program} is not built"]
    results, notes = {}, []
    remaining = chosen
    while remaining:
        found, note = run_program(program, directory, remaining, everything)
        results.update(found)
        missing = [t for t in remaining if t.name not in results]
        if not missing:
            break
        # Catch2 runs the tests in the order ctest lists them: the first one without a report is
        # the one that crashed or hung. It alone gets its own process (or, having hung, its
        # verdict); the ones after it go on together.
        culprit, remaining, everything = missing[0], missing[1:], False
        if note.startswith("timed out"):
            results[culprit.name] = (False, note)
        else:
            results[culprit.name] = run_alone(culprit)
        last = (note.strip().splitlines() or ["no report"])[-1]
        notes.append(f"{catch_name(culprit.spec)}: {last}")
    return results, notes


def write_junit(path, tests, results, seconds):
    suite = ET.Element("testsuite", name="g2c", tests=str(len(tests)),
                       failures=str(sum(1 for passed, _ in results.values() if not passed)),
                       time=f"{seconds:.2f}")
    for test in tests:
        passed, output = results.get(test.name, (False, "not run"))
        case = ET.SubElement(suite, "testcase", name=test.name, classname=test.name,
                             status="run" if passed else "fail")
        if not passed:
            ET.SubElement(case, "failure", message="Failed")
        ET.SubElement(case, "system-out").text = output
    handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".xml")
    with os.fdopen(handle, "wb") as stream:
        ET.ElementTree(suite).write(stream, encoding="utf-8", xml_declaration=True)
    os.replace(temporary, path)


def command_run(build, junit, extra):
    junit = os.path.abspath(junit)
    os.makedirs(os.path.dirname(junit), exist_ok=True)
    label, jobs, per_test, rest = None, 1, False, list(extra)
    while rest:
        option = rest.pop(0)
        if option == "-L" and rest:
            label = rest.pop(0)
        elif option == "-j" and rest and rest[0].isdigit():
            jobs = max(1, int(rest.pop(0)))
        elif re.fullmatch(r"-j\d+", option):
            jobs = max(1, int(option[2:]))
        elif option == "--per-test":
            per_test = True
        else:
            print(f"course_results.py run: unknown option {option!r}", file=sys.stderr)
            return 2
    if per_test:
        label_args = ["-L", label] if label else []
        return subprocess.run(["ctest", "--test-dir", build, "--output-junit", junit,
                               "--no-tests=error", "-j", str(jobs), *label_args]).returncode

    start = time.monotonic()
    tests = registered_tests(build, label)
    if not tests:
        print(f"no tests{' with label ' + label if label else ''} in {build}", file=sys.stderr)
        return 8
    every = {}
    for test in registered_tests(build):
        every.setdefault(test.program, []).append(test)
    groups = OrderedDict()
    for test in tests:
        groups.setdefault((test.program, test.directory), []).append(test)
    # The longest programs first, so that the last one to finish is a short one.
    order = sorted(groups.items(), key=lambda item: -len(item[1]))

    def run_group(item):
        (program, directory), chosen = item
        t0 = time.monotonic()
        everything = len(chosen) == len(every.get(program, []))
        results, notes = run_tests_of(program, directory, chosen, everything)
        passed = sum(1 for t in chosen if results[t.name][0])
        line = (f"{os.path.basename(program):<34} {len(chosen):>4} tests  {passed:>4} passed  "
                f"{time.monotonic() - t0:6.1f} s")
        for note in notes:
            line += f"\n    ended the run early, then ran alone: {note}"
        print(line, flush=True)
        return results

    results = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for found in pool.map(run_group, order):
            results.update(found)
    write_junit(junit, tests, results, time.monotonic() - start)
    failed = sum(1 for test in tests if not results[test.name][0])
    print(f"{len(tests)} tests, {len(tests) - failed} passed or skipped, {failed} failed, "
          f"in {time.monotonic() - start:.1f} s")
    return 0 if failed == 0 else 8


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
