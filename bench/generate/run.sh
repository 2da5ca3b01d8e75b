#!/usr/bin/env bash
# Test sets from the same documents by assay, ragas 0.4.3 and DeepEval
# 4.3.1 against the same loopback judge (docs/performance.md, "Test sets
# against ragas and DeepEval"): bench/peers/run.sh (the builds, the peers'
# venv in ${PEERS_VENV:-target/peers-venv}) with this bench's requirements
# and script, bench/generate/peers.py, once the local embedder that
# `assay generate` uses is fetched. A benchmark, not a test: no part of
# scripts/test.sh.
#
# Arguments go to peers.py, e.g.
#   bench/generate/run.sh --size 24 --latency-ms 200 --concurrency 16
set -euo pipefail
# What peers.py writes goes to the folder this was started from.
export BENCH_OUT="${BENCH_OUT:-$PWD}"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

scripts/fetch-models.sh >/dev/null
PEERS_REQUIREMENTS=bench/generate/requirements.txt PEERS_SCRIPT=bench/generate/peers.py \
    exec bench/peers/run.sh "$@"
