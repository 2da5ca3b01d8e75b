#!/usr/bin/env bash
# The judged conversation metrics of assay, DeepEval 4.3.1 and ragas 0.4.3
# on the same conversations against the same loopback judge
# (docs/performance.md, "Conversations against DeepEval and ragas"): builds
# `assay` and `loopback-judge` (release, or the cargo profile named by
# ASSAY_BENCH_PROFILE: the judge's latency dominates either way), makes a venv of the peers
# (bench/peers/requirements.txt, in ${PEERS_VENV:-target/peers-venv}), then
# runs bench/peers/conversations.py. A benchmark, not a test: no part of
# scripts/test.sh. PEERS_REQUIREMENTS and PEERS_SCRIPT name another
# requirements file and script (bench/generate/run.sh does).
#
# Arguments go to conversations.py, e.g.
#   bench/peers/run.sh --conversations 50 --latency-ms 200 --concurrency 16
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

scripts/install-build-deps.sh
profile="${ASSAY_BENCH_PROFILE:-release}"
cargo build --profile "$profile" --locked --quiet -p assay -p assay-test-server --bins
[ "$profile" = dev ] && profile=debug
target="${CARGO_TARGET_DIR:-target}/$profile"
venv="${PEERS_VENV:-${CARGO_TARGET_DIR:-target}/peers-venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check \
    -r "${PEERS_REQUIREMENTS:-bench/peers/requirements.txt}"
exec "$venv/bin/python" "${PEERS_SCRIPT:-bench/peers/conversations.py}" \
    --assay "$target/assay" --judge "$target/loopback-judge" "$@"
