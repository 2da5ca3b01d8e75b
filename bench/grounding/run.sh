#!/usr/bin/env bash
# The grounding runtime (crates/assay-classifier, candle) beside Python
# transformers on torch's CPU backend and beside ONNX Runtime (the same
# model exported by torch.onnx): the same BERT classifiers, the same 64
# (window, claim) pairs, the same batching, in one run; milliseconds per
# pair and their ratios. Prints one Markdown table.
#
#   bench/grounding/run.sh
#   BENCH_PYTHON=/tmp/fixenv/bin/python THREADS=2 REPS=5 bench/grounding/run.sh
#
# The models are randomly initialised (bench/grounding/make_models.py: a
# MiniLM-L6-sized and a BERT-base-sized BertForSequenceClassification with
# the real tokenizer.json of all-MiniLM-L6-v2, which
# scripts/fetch-models.sh downloads); the workload is made from the SummEval
# sample in data/calibration (bench/grounding/make_pairs.py). Both are made
# under $BENCH_WORK (default target/bench-grounding) when missing.
#
# BENCH_PYTHON is a Python with torch and transformers (and onnx,
# onnxscript and onnxruntime, installed into it when missing); without it a venv is
# made under $BENCH_WORK from scripts/fixtures/requirements.txt (torch
# alone is about 1 GB). MODELS picks among minilm and base (default both);
# PAIRS is the number of alternating (assay, transformers) runs per model,
# the table giving the medians (default 1).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
THREADS=${THREADS:-2}
REPS=${REPS:-5}
PAIRS=${PAIRS:-1}
MODELS=${MODELS:-minilm base}
WORK="${BENCH_WORK:-$ROOT/target/bench-grounding}"
TOKENIZER="${ASSAY_HOME:-$HOME/.cache/assay}/models/all-minilm-l6-v2/tokenizer.json"
mkdir -p "$WORK"

say() { printf 'bench: %s\n' "$*" >&2; }

# 1. Our benchmark binary (the bench profile: release).
say "building the assay-classifier benchmark"
BIN=$(cargo bench -p assay-classifier --bench pairs --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import sys, json
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("target", {}).get("name") == "pairs" and m.get("executable"):
        print(m["executable"])' | tail -n1)
[ -x "$BIN" ] || { say "benchmark binary not built"; exit 1; }

# 2. The reference's Python.
PY=${BENCH_PYTHON:-}
if [ -z "$PY" ]; then
    VENV="$WORK/venv"
    REQ="$ROOT/scripts/fixtures/requirements.txt"
    if ! cmp -s "$REQ" "$VENV/installed.txt"; then
        say "installing torch and transformers into $VENV"
        rm -rf "$VENV"
        python3 -m venv "$VENV"
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQ" >&2
        cp "$REQ" "$VENV/installed.txt"
    fi
    PY="$VENV/bin/python"
fi
if ! "$PY" -c 'import onnx, onnxruntime, onnxscript' 2>/dev/null; then
    say "installing onnx, onnxscript and onnxruntime into $PY's environment"
    "$PY" -m pip install --quiet --disable-pip-version-check onnx==1.23.2 onnxscript==0.7.2 onnxruntime==1.32.0 >&2
fi

# 3. Models and workload.
for model in $MODELS; do
    if [ ! -f "$WORK/models/$model/model.safetensors" ]; then
        [ -f "$TOKENIZER" ] || { say "no tokenizer at $TOKENIZER: run scripts/fetch-models.sh"; exit 1; }
        say "making the models under $WORK/models"
        "$PY" bench/grounding/make_models.py "$WORK/models" "$TOKENIZER" 2>/dev/null
        break
    fi
done
WORKLOAD="$WORK/pairs.jsonl"
[ -f "$WORKLOAD" ] || "$PY" bench/grounding/make_pairs.py "$WORK/models/minilm/tokenizer.json" "$WORKLOAD"

val() { printf '%s\n' "$1" | awk -v k="$2" '$1 == k {print $2}'; }
median() { python3 -c 'import sys, statistics; print("%.2f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

# 4. Alternating runs, so that each pair of runs sees the same load on a
# shared machine; the ratio is the median of the per-pair ratios.
ROWS=()
for model in $MODELS; do
    dir="$WORK/models/$model"
    o=(); t=(); x=(); ratios=(); xratios=()
    for _ in $(seq "$PAIRS"); do
        mine=$(ASSAY_BENCH_THREADS=$THREADS ASSAY_BENCH_REPS=$REPS ASSAY_BENCH_PROBABILITIES="$WORK/$model.assay.txt" \
            "$BIN" "$dir" "$WORKLOAD")
        if ! ref=$(ASSAY_BENCH_THREADS=$THREADS ASSAY_BENCH_REPS=$REPS "$PY" bench/grounding/reference.py \
            "$dir" "$WORKLOAD" --assay-probabilities "$WORK/$model.assay.txt" 2>"$WORK/$model.reference.err"); then
            cat "$WORK/$model.reference.err" >&2
            say "$model: the reference failed or disagreed with assay"
            exit 1
        fi
        if [ "$(val "$ref" tokens_per_pair)" != "$(val "$mine" tokens_per_pair)" ]; then
            say "$model: transformers read $(val "$ref" tokens_per_pair) tokens per pair, assay $(val "$mine" tokens_per_pair)"
            exit 1
        fi
        if ! ort=$(ASSAY_BENCH_THREADS=$THREADS ASSAY_BENCH_REPS=$REPS "$PY" bench/grounding/reference.py \
            "$dir" "$WORKLOAD" --onnx --assay-probabilities "$WORK/$model.assay.txt" 2>"$WORK/$model.onnx.err"); then
            cat "$WORK/$model.onnx.err" >&2
            say "$model: ONNX Runtime failed or disagreed with assay"
            exit 1
        fi
        a=$(val "$mine" ms_per_pair); b=$(val "$ref" ms_per_pair); c=$(val "$ort" ms_per_pair)
        o+=("$a"); t+=("$b"); x+=("$c")
        ratios+=("$(python3 -c "print($b / $a)")"); xratios+=("$(python3 -c "print($c / $a)")")
        say "$model: assay $a ms/pair, transformers $b ms/pair, onnxruntime $c ms/pair (mean P(entailment) $(val "$mine" mean_probability), $(val "$ref" mean_probability) and $(val "$ort" mean_probability); largest differences $(val "$ref" max_difference) and $(val "$ort" max_difference))"
    done
    ROWS+=("| $model | $(median "${o[@]}") | $(median "${t[@]}") | $(median "${x[@]}") | $(median "${ratios[@]}")x | $(median "${xratios[@]}")x | mean P $(val "$mine" mean_probability), max diff $(val "$ref" max_difference) (torch), $(val "$ort" max_difference) (ONNX) |")
done

echo
echo "Grounding models: $(val "$mine" pairs) (window, claim) pairs of $(val "$mine" tokens_per_pair) tokens on average, batches of 16, $THREADS threads; median of $REPS passes; torch $(val "$ref" torch), transformers $(val "$ref" transformers) ($(val "$ref" attention) attention), $(val "$ort" runtime); $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| model | assay ms/pair | transformers ms/pair | onnxruntime ms/pair | transformers / assay | onnxruntime / assay | agreement |"
echo "|---|---:|---:|---:|---:|---:|---|"
printf '%s\n' "${ROWS[@]}"
