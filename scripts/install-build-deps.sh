#!/usr/bin/env bash
# Install what assay-local needs to build llama.cpp from source (through the
# llama-cpp-sys-2 crate): cmake, a C/C++ compiler and libclang for bindgen;
# the headless Chromium plus chromedriver that the HTML report test drives;
# and Python's venv module, for the Python package's build and tests.
# Idempotent: does nothing when every tool is already present. Debian/Ubuntu.
set -euo pipefail

say() { printf 'install-build-deps: %s\n' "$*" >&2; }

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v clang >/dev/null 2>&1 || missing+=(clang)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
# bindgen loads libclang at build time.
if ! ldconfig -p 2>/dev/null | grep -q 'libclang[-.0-9]*\.so'; then
    missing+=(libclang-dev)
fi
# The report test (crates/assay/tests/it/report.rs) needs this exact path.
[ -x /usr/bin/chromedriver ] || missing+=(chromium chromium-driver)
# scripts/python-env.sh makes a venv (Debian splits ensurepip out).
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)

if [ ${#missing[@]} -eq 0 ]; then
    say "cmake, clang, a C++ compiler, libclang, chromedriver and python3-venv are present"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    say "missing: ${missing[*]}; install them with your package manager"
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi

say "installing: ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
say "done"
