#!/usr/bin/env bash
# Rebuild the grounding model (crates/assay-grounding/model/grounding.json)
# from the labelled training files of ../shared/data/train (or the folder
# given). Same files, same model, bit for bit: the crate's test
# `training_reproduces_the_committed_model_exactly` checks it.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${1:-../shared/data/train}"
cargo run --release --locked -p assay-grounding --bin train-grounding -- \
    "$DATA" crates/assay-grounding/model/grounding.json
