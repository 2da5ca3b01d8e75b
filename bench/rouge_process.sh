#!/usr/bin/env bash
# ROUGE, whole process on one thread: `assay eval ROWS.jsonl -m rouge
# --threads 1` (start-up, reading and checking the rows, scoring, the run
# directory) against one Python process that scores the same rows with
# rouge-score 0.1.2 and writes them (rouge_process.py). The two alternate,
# REPEAT pairs; each side's best wall time and the ratio are printed.
# Knobs: ROWS (20000), REPEAT (3).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/.."
rows="${ROWS:-20000}"
repeat="${REPEAT:-3}"
bash bench/setup.sh
cargo build --quiet --release -p assay
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 bench/make_big_jsonl.py "$rows" "$work/rows.jsonl"
now() { date +%s.%N; }
best_assay=""
best_python=""
for i in $(seq "$repeat"); do
    rm -rf "$work/run"
    t0=$(now)
    target/release/assay eval "$work/rows.jsonl" -m rouge --threads 1 --out "$work/run" >/dev/null 2>"$work/assay.err"
    t1=$(now)
    bench/.venv/bin/python bench/rouge_process.py "$work/rows.jsonl" "$work/py.jsonl"
    t2=$(now)
    a=$(echo "$t1 - $t0" | bc -l)
    p=$(echo "$t2 - $t1" | bc -l)
    echo "pair $i: assay ${a}s, rouge-score ${p}s" >&2
    if [[ -z "$best_assay" ]] || (( $(echo "$a < $best_assay" | bc -l) )); then best_assay=$a; fi
    if [[ -z "$best_python" ]] || (( $(echo "$p < $best_python" | bc -l) )); then best_python=$p; fi
done
printf 'ROUGE whole process, %s rows, one thread, best of %s: assay %.3f s, rouge-score %.2f s, ratio %.1fx (load %s)\n' \
    "$rows" "$repeat" "$best_assay" "$best_python" "$(echo "$best_python / $best_assay" | bc -l)" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
