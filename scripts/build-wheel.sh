#!/usr/bin/env bash
# Builds the Python package's wheel (distribution assay-eval, import name
# assay, abi3 for CPython 3.10+) in release into target/wheels/, with the
# pinned maturin of the project's venv (${ASSAY_VENV:-.venv}, created if
# missing). Install it with: pip install target/wheels/assay_eval-*.whl
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/python-env.sh
(cd python && "$venv_python" -m maturin build --release --locked --out ../target/wheels)
