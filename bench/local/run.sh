#!/usr/bin/env bash
# Benchmarks of assay-local, side by side with llama.cpp's own llama-bench
# built from the same llama.cpp source (the copy vendored by the
# llama-cpp-sys-2 crate that assay-local builds), on the same GGUF and the
# same thread count; the embedder beside the same model in ONNX Runtime
# (bench/local/embed_ort.py). Prints one table.
#
#   bench/local/run.sh            # everything
#   THREADS=2 PAIRS=3 CALLS=50 bench/local/run.sh
#   PARTS="pp1024 tg64 embed" BENCH_PROFILE=dev BENCH_WORK=DIR bench/local/run.sh
#
# PARTS picks among pp256 pp1024 tg64 call prefix memory embed (default
# all). BENCH_PROFILE is the cargo profile of our binary (default bench;
# `dev` reuses a debug build's llama.cpp, which is compiled with the same
# flags as the release one). BENCH_WORK is where llama-bench is built and
# where the ONNX Runtime venv is installed (from PyPI, every package pinned
# in bench/local/embed_ort.requirements.txt).
#
# Needs the models (scripts/fetch-models.sh) and the build tools
# (scripts/install-build-deps.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
THREADS=${THREADS:-2}
PAIRS=${PAIRS:-3}
CALLS=${CALLS:-50}
PARTS=" ${PARTS:-pp256 pp1024 tg64 call prefix memory embed} "
PROFILE=${BENCH_PROFILE:-bench}
MODELS="${ASSAY_HOME:-$HOME/.cache/assay}/models"
GGUF="${ASSAY_BENCH_MODEL:-$MODELS/qwen2.5-coder-0.5b-instruct.gguf}"
WORK="${BENCH_WORK:-$ROOT/target/bench-local}"
mkdir -p "$WORK"

say() { printf 'bench: %s\n' "$*" >&2; }
wanted() { [[ $PARTS == *" $1 "* ]]; }

if wanted pp256 || wanted pp1024 || wanted tg64 || wanted call || wanted prefix || wanted memory; then
    [ -f "$GGUF" ] || { say "no model at $GGUF: run scripts/fetch-models.sh"; exit 1; }
fi

# 1. Our benchmark binary (release).
say "building the assay-local benchmark"
BIN=$(cargo bench --profile "$PROFILE" -p assay-local --bench local --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import sys, json
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("target", {}).get("name") == "local" and m.get("executable"):
        print(m["executable"])' | tail -n1)
[ -x "$BIN" ] || { say "benchmark binary not built"; exit 1; }

# 2. llama-bench built from the llama.cpp that the crate vendors, configured
# like the crate builds it (GGML_NATIVE off: the portable x86-64 AVX2 build;
# no OpenMP). The crate ships llama.cpp without tools/llama-bench, so the
# tool's own sources (two files) come from the llama.cpp that the PyPI
# sdist of llama-cpp-python vendors; every kernel and the library itself
# are the crate's copy.
VER=$(awk '/^name = "llama-cpp-sys-2"/{getline; gsub(/[" ]/,""); sub("version=",""); print}' Cargo.lock)
LCP=${LLAMA_CPP_PYTHON:-0.3.36}
LB="$WORK/llama-bench-$VER/bin/llama-bench"
if { wanted pp256 || wanted pp1024 || wanted tg64; } && [ ! -x "$LB" ]; then
    SRC=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/llama-cpp-sys-2-"$VER"/llama.cpp | head -n1)
    say "building llama-bench against $SRC"
    rm -rf "$WORK/llama-src-$VER" "$WORK/lcp"
    cp -r "$SRC" "$WORK/llama-src-$VER"
    python3 -m pip download --quiet --no-deps --no-binary :all: --no-build-isolation \
        -d "$WORK/lcp" "llama-cpp-python==$LCP" 2>/dev/null \
        || python3 -m pip download --quiet --no-deps --no-binary :all: -d "$WORK/lcp" "llama-cpp-python==$LCP"
    tar -xzf "$WORK/lcp/llama_cpp_python-$LCP.tar.gz" -C "$WORK/lcp"
    cp -r "$WORK/lcp/llama_cpp_python-$LCP/vendor/llama.cpp/tools/llama-bench/." "$WORK/llama-src-$VER/tools/llama-bench/"
    echo 'add_subdirectory(llama-bench)' > "$WORK/llama-src-$VER/tools/CMakeLists.txt"
    cmake -S "$WORK/llama-src-$VER" -B "$WORK/llama-bench-$VER" -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
        -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_TOOLS=ON -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF \
        -DBUILD_SHARED_LIBS=OFF >/dev/null
    cmake --build "$WORK/llama-bench-$VER" --target llama-bench -j "$(nproc)" >/dev/null
fi

# 3. The embedder's reference: the same model in ONNX Runtime, in a venv
# of pinned packages. A failed install leaves its column empty rather than
# failing the whole bench.
EMBEDDER="$MODELS/all-minilm-l6-v2"
ORT_PY=""
if wanted embed; then
    VENV="$WORK/ort-venv"
    REQ="$ROOT/bench/local/embed_ort.requirements.txt"
    if ! cmp -s "$REQ" "$VENV/installed.txt"; then
        say "installing ONNX Runtime into $VENV"
        rm -rf "$VENV"
        if python3 -m venv "$VENV" \
            && "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQ" >&2; then
            cp "$REQ" "$VENV/installed.txt"
        fi
    fi
    if cmp -s "$REQ" "$VENV/installed.txt"; then
        ORT_PY="$VENV/bin/python"
    else
        say "ONNX Runtime could not be installed: the embedder is measured without its reference"
    fi
fi

ours() { ASSAY_BENCH_REPS=1 ASSAY_BENCH_THREADS=$THREADS ASSAY_BENCH_MODEL="$GGUF" "$BIN" "$@" | awk '{print $2}'; }
theirs() { # -p N -n 0 | -p 0 -n N ; prints tokens/s (mean over -r runs)
    "$LB" -m "$GGUF" -t "$THREADS" -r 1 "$@" -o csv 2>/dev/null \
        | python3 -c 'import sys, csv
rows = list(csv.DictReader(sys.stdin))
print(rows[-1]["avg_ts"])'
}
median() { python3 -c 'import sys, statistics; print("%.2f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

# Paired, alternating runs: the machine is shared, so each pair sees the
# same load, and the table gives the median of the per-pair ratios.

declare -A OURS THEIRS RATIO
for test in pp256 pp1024 tg64; do
    wanted "$test" || continue
    n=${test#??}
    ratios=(); o=(); t=()
    for _ in $(seq "$PAIRS"); do
        case $test in
            pp*) a=$(ours pp "$n"); b=$(theirs -p "$n" -n 0) ;;
            tg*) a=$(ours tg "$n"); b=$(theirs -p 0 -n "$n") ;;
        esac
        o+=("$a"); t+=("$b")
        ratios+=("$(python3 -c "print($a / $b)")")
        say "$test: assay-local $a tok/s, llama-bench $b tok/s"
    done
    OURS[$test]=$(median "${o[@]}"); THEIRS[$test]=$(median "${t[@]}"); RATIO[$test]=$(median "${ratios[@]}")
done

val() { printf '%s\n' "$1" | awk -v k="$2" '$1 == k {print $2}'; }

# The embedder: ours (on THREADS threads) and ONNX
# Runtime (THREADS intra-op threads), each the median of 3 passes over the
# same 256 sentences. The reference only counts where it read the same
# tokens and passed its cosine check (it exits non-zero otherwise).
if wanted embed; then
    o=(); t=(); ratios=()
    for _ in $(seq "$PAIRS"); do
        mine=$(ASSAY_BENCH_THREADS=$THREADS "$BIN" embed)
        a=$(val "$mine" embed_sentences_per_s)
        o+=("$a")
        [ -n "$ORT_PY" ] || { say "embed: assay-local $a sentences/s"; continue; }
        if ! ref=$(ASSAY_BENCH_THREADS=$THREADS "$ORT_PY" bench/local/embed_ort.py "$EMBEDDER"); then
            say "embed: assay-local $a sentences/s; the ONNX Runtime reference failed: the embedder is measured without it"
            ORT_PY="" t=() ratios=()
            continue
        fi
        if [ "$(val "$ref" embed_tokens_per_sentence)" != "$(val "$mine" embed_tokens_per_sentence)" ]; then
            say "embed: assay-local $a sentences/s; ONNX Runtime read other tokens ($(val "$ref" embed_tokens_per_sentence) per sentence against $(val "$mine" embed_tokens_per_sentence)): not comparable, left out"
            ORT_PY="" t=() ratios=()
            continue
        fi
        b=$(val "$ref" embed_sentences_per_s)
        t+=("$b")
        ratios+=("$(python3 -c "print($a / $b)")")
        say "embed: assay-local $a sentences/s, onnxruntime $b sentences/s (cosine check $(val "$ref" embed_cosine_check), padding share $(val "$ref" embed_padding_share))"
    done
    OURS[embed]=$(median "${o[@]}")
    if [ ${#t[@]} -gt 0 ]; then
        THEIRS[embed]=$(median "${t[@]}")
        RATIO[embed]=$(printf '%.2fx' "$(median "${ratios[@]}")")
        ORT_VER=$(val "$ref" onnxruntime_version)
        ORT_COSINE=$(val "$ref" embed_cosine_check)
        ORT_PADDING=$(val "$ref" embed_padding_share)
    fi
fi

say "typical call, prefix caching"
CALL="" PREFIX="" JMEM="" EMEM=""
wanted call && CALL=$(ASSAY_BENCH_THREADS=$THREADS ASSAY_BENCH_MODEL="$GGUF" "$BIN" call)
wanted prefix && PREFIX=$(ASSAY_BENCH_CALLS=$CALLS ASSAY_BENCH_THREADS=$THREADS ASSAY_BENCH_MODEL="$GGUF" "$BIN" prefix)

peak() { # peak resident memory in MB of one run
    /usr/bin/time -v env ASSAY_BENCH_THREADS="$THREADS" ASSAY_BENCH_MODEL="$GGUF" "$BIN" "$1" 2>&1 >/dev/null \
        | awk '/Maximum resident set size/ {printf "%.0f", $NF / 1024}'
}
if wanted memory; then
    JMEM=$(peak judge-mem)
    EMEM=$(peak embed-mem)
fi

echo
echo "assay-local benchmark: $(basename "$GGUF"), $THREADS threads, llama.cpp $VER, medians of $PAIRS paired runs"
printf '%-34s %14s %14s %8s\n' "measure" "assay-local" "llama-bench" "ratio"
for test in pp256 pp1024 tg64; do
    wanted "$test" || continue
    printf '%-34s %14s %14s %8s\n' "$test (tokens/s)" "${OURS[$test]}" "${THEIRS[$test]}" "$(printf '%.2f' "${RATIO[$test]}")x"
done
if wanted call; then
    printf '%-34s %14s\n' "typical call ($(val "$CALL" call_prompt_tokens) prompt + 40 gen, s)" "$(val "$CALL" call_seconds)"
fi
if wanted prefix; then
    printf '%-34s %14s\n' "$CALLS calls, no prefix caching (s)" "$(val "$PREFIX" prefix_uncached_seconds)"
    printf '%-34s %14s\n' "$CALLS calls, prefix caching (s)" "$(val "$PREFIX" prefix_cached_seconds)"
    printf '%-34s %14s\n' "  prompt share served from cache" "$(val "$PREFIX" prefix_cached_reused_share)"
fi
if wanted memory; then
    printf '%-34s %14s\n' "judge peak RSS (MB)" "$JMEM"
    printf '%-34s %14s\n' "embedder peak RSS (MB)" "$EMEM"
fi
if wanted embed; then
    printf '%-34s %14s %14s %8s\n' "" "assay-local" "onnxruntime" "ratio"
    printf '%-34s %14s %14s %8s\n' "embedder sentences/s (batch 32)" "${OURS[embed]}" "${THEIRS[embed]:-}" "${RATIO[embed]:-}"
    [ -z "${THEIRS[embed]:-}" ] || echo "(onnxruntime $ORT_VER on the same weights: cosine check $ORT_COSINE; padding is $ORT_PADDING of its batches)"
fi
