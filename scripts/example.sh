#!/usr/bin/env bash
# Runs assay on the bundled example with the local default judge and
# embedder (in-process, no key, no network once the models are fetched):
# the default RAG suite plus lexical metrics. Extra arguments go to `eval`.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-build-deps.sh
scripts/fetch-models.sh

cargo run --release --locked -p assay -- eval examples/rag_qa.jsonl \
    --metrics faithfulness,answer_relevancy,context_precision,context_recall,rouge,bleu,exact_match "$@"
