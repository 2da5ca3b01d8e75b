#!/usr/bin/env bash
# Runs assay on the bundled example with the local default judge and
# embedder (in-process, no key, no network once the models are fetched):
# the default RAG suite plus lexical metrics. Extra arguments go to `eval`.
set -euo pipefail
cd "$(dirname "$0")/.."

# The installers' output (apt's, pip's) goes to a log, with one status line
# each; when one fails, the end of its log is printed and the script stops.
quietly() { # script
    local log
    log="target/logs/$(basename "$1" .sh).log"
    mkdir -p target/logs
    printf 'example.sh: %s (output in %s)\n' "$1" "$log" >&2
    "$1" >"$log" 2>&1 || {
        local status=$?
        printf 'example.sh: %s failed (exit code %d); the end of %s:\n' "$1" "$status" "$log" >&2
        tail -n 40 "$log" >&2
        exit "$status"
    }
}
quietly scripts/install-build-deps.sh
quietly scripts/fetch-models.sh

cargo run --release --locked -p assay -- eval examples/rag_qa.jsonl \
    --metrics faithfulness,answer_relevancy,context_precision,context_recall,rouge,bleu,exact_match "$@"
