#!/usr/bin/env bash
# The whole test suite: formatting, lints, and every crate's tests.
# Needs only cargo (with rustfmt and clippy); dependencies come from crates.io.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
