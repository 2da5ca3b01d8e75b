#!/usr/bin/env bash
# One command: install the Python references (once), build the Rust benchmark,
# time both on the same replicated parity set, print the Markdown table and
# write it to bench/results.md (raw outputs: bench/results.rust.json and
# bench/results.python.json).
#
# Environment: PAIRS (replicated set, default 20000), SAMPLE (pairs the Python
# side times, default 2000), THREADS (default: all logical CPUs), REPEAT (Rust
# runs per measurement, best kept; default 5).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pairs="${PAIRS:-20000}"
sample="${SAMPLE:-2000}"
threads="${THREADS:-$(nproc)}"
repeat="${REPEAT:-5}"

load_start="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
"$here/setup.sh"
cargo build --release --quiet --manifest-path "$here/lexical/Cargo.toml"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "run.sh: timing the Rust implementations on $pairs pairs ($threads threads)" >&2
cargo run --release --quiet --manifest-path "$here/lexical/Cargo.toml" -- \
    --pairs "$pairs" --sample "$sample" --threads "$threads" --repeat "$repeat" \
    > "$work/rust.json"

echo "run.sh: timing the Python references on $sample of the $pairs pairs ($threads processes)" >&2
"$here/.venv/bin/python" "$here/reference.py" \
    --pairs "$pairs" --sample "$sample" --procs "$threads" > "$work/python.json"

command="bench/run.sh"
[[ -n "${PAIRS:-}${SAMPLE:-}${THREADS:-}${REPEAT:-}" ]] \
    && command="PAIRS=$pairs SAMPLE=$sample THREADS=$threads REPEAT=$repeat bench/run.sh"
"$here/.venv/bin/python" "$here/report.py" "$work/rust.json" "$work/python.json" \
    --command "$command" --load-start "$load_start" > "$work/results.md"

cp "$work/rust.json" "$here/results.rust.json"
cp "$work/python.json" "$here/results.python.json"
cp "$work/results.md" "$here/results.md"
cat "$here/results.md"
