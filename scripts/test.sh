#!/usr/bin/env bash
# The whole test suite, from a fresh clone to a verdict:
#   setup (whatever is missing) -> build student and reference -> every test of the reference
#   build passes -> the student build's scaffold invariant holds (course tests and checks) -> the
#   course tests are those of tests/course_tests.txt, under the Python edition's names -> every
#   student file has its solutions twin and vice versa -> every student function has a hint ladder,
#   and the ladders' code, pasted into a copy of the student tree, passes the course tests ->
#   formatting -> exercise smoke runs, model files between this edition and the Python one (with
#   the project's Python), the pretrained model and server checks, and the tokenizer under
#   sanitizers, two at a time.
# Logs go to build/test-logs/. Exits non-zero on any deviation; the last line is the summary.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
start=$SECONDS

G2C_SETUP_QUIET=1 scripts/setup.sh || { echo "summary: 0 passed, 1 failed, 0 skipped (setup failed)"; exit 1; }
export PATH="$ROOT/.venv/bin:$PATH"
logs="build/test-logs"
mkdir -p "$logs"

passed=0
failed=0
skipped=0
failures=()

# step <name> <command...>: runs one check, its output in build/test-logs/<name>.log.
step() {
  local name="$1"
  shift
  local t0=$SECONDS
  if "$@" >"$logs/$name.log" 2>&1; then
    printf '  ok    %-28s %4ss\n' "$name" $((SECONDS - t0))
    return 0
  fi
  printf '  FAIL  %-28s %4ss  (log: %s)\n' "$name" $((SECONDS - t0)) "$logs/$name.log"
  tail -n 25 "$logs/$name.log" | sed 's/^/        /'
  failures+=("$name")
  return 1
}

# The project checks after the builds run two at a time: most use one core of the two the course's
# machine has, and none shares files or ports with another. step_async <name> <command...> starts
# one as soon as a place is free; results are printed in the order the steps were started, each as
# soon as it and those before it are known; finish_async waits for the last. Side by side,
# LibTorch's OpenMP threads sleep when they have nothing to do instead of spinning
# (OMP_WAIT_POLICY=PASSIVE): spinning, two smoke runs of two threads each on two cores took 80 to
# 100 s instead of 4 to 20.
parallel=2
async_names=()
async_shown=0
show_async() {
  while ((async_shown < ${#async_names[@]})); do
    local name="${async_names[$async_shown]}" verdict seconds
    [[ -f "$logs/$name.status" ]] || return 0
    read -r verdict seconds <"$logs/$name.status"
    if [[ "$verdict" == ok ]]; then
      printf '  ok    %-28s %4ss\n' "$name" "$seconds"
    else
      printf '  FAIL  %-28s %4ss  (log: %s)\n' "$name" "$seconds" "$logs/$name.log"
      tail -n 25 "$logs/$name.log" | sed 's/^/        /'
      failures+=("$name")
    fi
    async_shown=$((async_shown + 1))
  done
}
step_async() {
  local name="$1"
  shift
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n; done
  show_async
  rm -f "$logs/$name.status"
  async_names+=("$name")
  (
    export OMP_WAIT_POLICY=PASSIVE
    t0=$SECONDS
    if "$@" >"$logs/$name.log" 2>&1; then verdict=ok; else verdict=FAIL; fi
    echo "$verdict $((SECONDS - t0))" >"$logs/$name.status"
  ) &
}
finish_async() {
  while (($(jobs -rp | wc -l) > 0)); do
    wait -n
    show_async
  done
  wait
  show_async
}

# script <path> [args...]: runs a project script; one that lost its executable bit fails its step
# with the fix instead of being skipped.
script() {
  [[ -x "$1" ]] || { echo "$1 is not executable: chmod +x $1 (and commit the mode)"; return 1; }
  "$@"
}

# Adds the "tests: N passed, M failed, K skipped" line of a log to the totals.
count() {
  local line
  line="$(grep -E '^(tests|scaffold-checks|checks): ' "$1" | tail -n 1)"
  [[ -n "$line" ]] || return 0
  [[ "$line" =~ ([0-9]+)\ passed ]] && passed=$((passed + BASH_REMATCH[1]))
  [[ "$line" =~ ([0-9]+)\ failed ]] && failed=$((failed + BASH_REMATCH[1]))
  [[ "$line" =~ ([0-9]+)\ skipped ]] && skipped=$((skipped + BASH_REMATCH[1]))
  return 0
}

echo "test: building"
step build-reference cmake --build --preset reference --target all programs && export G2C_PROGRAMS_BUILT=1
step build-student cmake --build --preset student

echo "test: reference build, every test"
python3 scripts/course_results.py run build/reference "$logs/reference.xml" -j2 >"$logs/ctest-reference.log" 2>&1
step reference-tests python3 scripts/course_results.py all-pass build/reference "$logs/reference.xml"
count "$logs/reference-tests.log"

echo "test: student build, the scaffold invariant (course tests and checks)"
python3 scripts/course_results.py run build/student "$logs/student.xml" -L 'course|check' -j2 >"$logs/ctest-student.log" 2>&1
step scaffold-invariant python3 scripts/course_results.py scaffold build/student "$logs/student.xml"
grep '^  scaffold ' "$logs/scaffold-invariant.log"
count "$logs/scaffold-invariant.log"

# Grading the untouched scaffold: nothing a student has not done may earn a point.
grade_scaffold() {
  python3 scripts/course_results.py grade build/student "$logs/student.xml" "$logs/grade-scaffold" &&
    grep -qE '^score 0/[0-9]+ ' "$logs/grade-scaffold.log"
}
step grade-scaffold grade_scaffold
grep '^score ' "$logs/grade-scaffold.log"

echo "test: course test names and statuses (tests/course_tests.txt, the Python edition's names)"
step course-test-names python3 scripts/check_course_tests.py build/reference build/student
grep -E '^  (python names|COURSE-TESTS)' "$logs/course-test-names.log"

echo "test: project checks"
step solution-twins script scripts/check_twins.sh
step hint-ladders "$ROOT/.venv/bin/python" scripts/hints.py check && count "$logs/hint-ladders.log"
step hint-code script scripts/check_hint_code.sh build/hint-check
step formatting script scripts/check_format.sh
# The longest first, so that the short ones fill in beside them.
step_async tokenizer-sanitizers script scripts/sanitize_tokenizer.sh
step_async pretrained-model "$ROOT/.venv/bin/python" scripts/check_pretrained_model.py build/reference
for smoke in scripts/smoke_*.sh; do
  step_async "$(basename "$smoke" .sh)" script "$smoke" build/reference
done
step_async model-interop "$ROOT/.venv/bin/python" scripts/check_model_interop.py build/reference
step_async gguf-dequantization "$ROOT/.venv/bin/python" scripts/check_gguf.py build/reference
step_async pretrained-tokenizer "$ROOT/.venv/bin/python" scripts/check_pretrained_tokenizer.py build/reference
step_async rag-hash "$ROOT/.venv/bin/python" scripts/check_rag_hash.py build/reference
step_async rag-questions python3 scripts/check_questions.py
step_async agent-tasks python3 scripts/check_agent_tasks.py
step_async assistant-pty "$ROOT/.venv/bin/python" scripts/check_assistant_pty.py build/reference
step_async calculator python3 scripts/check_calculator.py build/reference
step_async serve-clients "$ROOT/.venv/bin/python" scripts/check_serve.py build/reference
step_async serve-hostile python3 scripts/check_serve_hostile.py build/reference
finish_async
for name in serve-clients serve-hostile tokenizer-sanitizers; do
  [[ " ${failures[*]} " == *" $name "* ]] || count "$logs/$name.log"
done

total_failed=$((failed + ${#failures[@]}))
echo "test: finished in $((SECONDS - start))s"
if ((${#failures[@]})); then
  echo "test: failed steps: ${failures[*]}"
fi
echo "summary: ${passed} passed, ${total_failed} failed, ${skipped} skipped"
((total_failed == 0))
