#!/usr/bin/env bash
# The property tests for longer than `cargo test` runs them: the dataset
# readers and the results log (assay-core), structured-output parsing,
# validation and repair (assay-llm), resume after a torn results file
# (assay-engine), the grammar-constrained decoder (assay-local); and, when
# no argument is given, the cache shared by processes at once (assay-llm).
# PROPTEST_CASES cases per property (default 20000), ASSAY_STRESS_ROUNDS
# operations per cache process (default 50000); further arguments go to
# the test binaries (e.g. a property's name).
# A failure is saved under the crate's tests/proptest-regressions/ (the
# decoder's: crates/assay-local/proptest-regressions/) and replayed first
# by every later `cargo test`: commit that file with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."

export PROPTEST_CASES="${PROPTEST_CASES:-20000}"
export ASSAY_STRESS_ROUNDS="${ASSAY_STRESS_ROUNDS:-50000}"
cargo test --release --locked -p assay-core -p assay-llm -p assay-engine --test it -- props:: "$@"
cargo test --release --locked -p assay-local --lib -- props:: "$@"
if [ $# -eq 0 ]; then
    cargo test --release --locked -p assay-llm --test it -- \
        cache::processes_sharing_a_cache_never_get_another_key_s_answer
fi
