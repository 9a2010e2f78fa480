#!/usr/bin/env bash
# Every student file listed in cmake/G2CCourse.cmake exists with its reference twin in
# g2c/solutions/, and g2c/solutions/ holds nothing that is not a twin of a listed student file.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mapfile -t listed < <(sed -n 's/^ *"\([0-9a-z][0-9a-z_]*\) \+\([a-z_]*\) \+\([a-z_/]*\)".*/\3/p' cmake/G2CCourse.cmake)
problems=0
# Membership by lookup, not `printf | grep -q`: under pipefail, grep -q quitting at its first
# match can kill printf with SIGPIPE and turn a hit into a miss.
declare -A is_listed
for file in "${listed[@]}"; do is_listed["$file"]=1; done
for file in "${listed[@]}"; do
  for path in "g2c/$file.cpp" "g2c/solutions/$file.cpp"; do
    if [[ ! -f "$path" ]]; then
      echo "missing: $path (listed as a course file in cmake/G2CCourse.cmake)"
      problems=$((problems + 1))
    fi
  done
  if [[ -f "g2c/$file.cpp" ]] && ! grep -q 'g2c::todo(' "g2c/$file.cpp"; then
    echo "g2c/$file.cpp: a student file without a TODO (g2c::todo) body"
    problems=$((problems + 1))
  fi
done
while IFS= read -r path; do
  file="${path#g2c/solutions/}"
  file="${file%.cpp}"
  if [[ -z "${is_listed[$file]:-}" ]]; then
    echo "orphan: $path has no entry in cmake/G2CCourse.cmake"
    problems=$((problems + 1))
  fi
done < <(find g2c/solutions -name '*.cpp' | sort)
# One naming rule for what is implemented for you: <concept>_provided.cpp is the provided half of
# <concept>.h, beside it, and <concept>_<part>_provided.cpp a further provided piece of it (the
# Trainer's checkpoints, the tokenizer's fast paths); a file with no student half is named for its
# concept alone.
while IFS= read -r path; do
  stem="${path%_provided.cpp}"
  while [[ ! -f "$stem.h" && "$(basename "$stem")" == *_* ]]; do stem="${stem%_*}"; done
  if [[ ! -f "$stem.h" ]]; then
    echo "naming: $path implements no header beside it (X_provided.cpp or X_part_provided.cpp implements X.h)"
    problems=$((problems + 1))
  fi
done < <(find g2c -path g2c/solutions -prune -o -name '*_provided.cpp' -print | sort)
# In a course package (a folder with student files) every other file is one of those two kinds.
while IFS= read -r folder; do
  while IFS= read -r path; do
    file="${path#g2c/}"
    file="${file%.cpp}"
    [[ "$path" == *_provided.cpp ]] && continue
    [[ -n "${is_listed[$file]:-}" ]] && continue
    if [[ ! -f "${path%.cpp}.h" ]]; then
      echo "naming: $path is neither a student file, nor X_provided.cpp, nor the X.cpp of an X.h"
      problems=$((problems + 1))
    fi
  done < <(find "g2c/$folder" -maxdepth 1 -name '*.cpp' | sort)
done < <(printf '%s\n' "${listed[@]}" | cut -d/ -f1 | sort -u)
echo "checks: $(( ${#listed[@]} - problems < 0 ? 0 : ${#listed[@]} - problems )) passed, ${problems} failed, 0 skipped"
((problems == 0))
