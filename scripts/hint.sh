#!/usr/bin/env bash
# Hints for the function you are writing, one step at a time:
#   scripts/hint.sh 09                       the module's functions
#   scripts/hint.sh 09 Block::forward        1. the idea
#   scripts/hint.sh 09 Block::forward --more 2. the steps, with their shapes
#   scripts/hint.sh 09 Block::forward --code 3. the code
# The ladders live in hints/<topic>/<file>.md, beside nothing you compile.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$root/.venv/bin/python"
[[ -x "$python" ]] || python=python3
exec "$python" "$root/scripts/hints.py" show "$@"
