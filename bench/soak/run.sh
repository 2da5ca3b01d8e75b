#!/usr/bin/env bash
# The soak benchmark (docs/concepts.md, "Reliability"): builds the release
# `assay` and `loopback-judge`, then runs bench/soak/soak.py, which runs the
# default RAG suite over generated samples against the loopback judge with
# faulty answers, kills `assay eval` at random moments and resumes it, and
# prints what was lost, doubled and repeated and the peak memory of each
# process. Exit code 1 when anything is lost or doubled or the repeats
# exceed their bound. A benchmark, not a test: no part of scripts/test.sh.
#
# Arguments go to soak.py (--help lists them), e.g. a short run:
#   bench/soak/run.sh --samples 500 --kills 3
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

scripts/install-build-deps.sh
cargo build --release --locked --quiet -p assay -p assay-test-server --bins
target="${CARGO_TARGET_DIR:-target}/release"
exec python3 bench/soak/soak.py --assay "$target/assay" --judge "$target/loopback-judge" "$@"
