#!/usr/bin/env bash
# The property tests for longer than `cargo test` runs them: the dataset
# readers and the results log (assay-core), structured-output parsing,
# validation and repair (assay-llm), resume after a torn results file
# (assay-engine). PROPTEST_CASES cases per property (default 20000);
# further arguments go to the test binaries (e.g. a property's name).
# A failure is saved under the crate's tests/proptest-regressions/ and
# replayed first by every later `cargo test`: commit that file with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."

export PROPTEST_CASES="${PROPTEST_CASES:-20000}"
cargo test --release --locked -p assay-core -p assay-llm -p assay-engine --test it -- props:: "$@"
