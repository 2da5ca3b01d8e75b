#!/usr/bin/env bash
# Builds llama.cpp's llama-server, the OpenAI-compatible server users run
# in production, for the test that judges through a real server
# (crates/assay/tests/it/real_server.rs). Its sources come from the PyPI
# sdist of llama-cpp-python, which vendors a whole llama.cpp (the Rust
# crate ships it without the server), pinned by SHA-256; built like the
# crate builds its copy (portable x86-64, no OpenMP, no UI, no curl).
# Prints the binary's path; a second run finds it built and prints it.
set -euo pipefail
cd "$(dirname "$0")/.."

LCP=0.3.36
SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
TARGET="${CARGO_TARGET_DIR:-$PWD/target}"
WORK="$TARGET/llama-server-$LCP"
BIN="$WORK/build/bin/llama-server"
if [ -x "$BIN" ]; then
    echo "$BIN"
    exit 0
fi
say() { echo "build-llama-server: $*" >&2; }
rm -rf "$WORK"
mkdir -p "$WORK"
say "downloading the llama-cpp-python $LCP sdist"
python3 -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    --no-build-isolation -d "$WORK" "llama-cpp-python==$LCP" >&2 2>/dev/null \
    || python3 -m pip download --quiet --disable-pip-version-check --no-deps \
        --no-binary :all: -d "$WORK" "llama-cpp-python==$LCP" >&2
echo "$SHA256  $WORK/llama_cpp_python-$LCP.tar.gz" | sha256sum --check --quiet
tar -xzf "$WORK/llama_cpp_python-$LCP.tar.gz" -C "$WORK" "llama_cpp_python-$LCP/vendor/llama.cpp"
SRC="$WORK/llama_cpp_python-$LCP/vendor/llama.cpp"
LOG="$WORK/build.log"
say "building llama-server (about 15 minutes on two cores; log in $LOG)"
# The build's few hundred lines go to the log, shown only if it fails.
if ! {
    cmake -S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_UI=OFF \
        -DLLAMA_USE_PREBUILT_UI=OFF -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF \
        -DBUILD_SHARED_LIBS=OFF \
        && cmake --build "$WORK/build" --target llama-server -j "$(nproc)"
} >"$LOG" 2>&1; then
    tail -n 60 "$LOG" >&2
    say "the build failed; the last 60 lines of $LOG are above"
    exit 1
fi
rm -rf "$WORK/llama_cpp_python-$LCP" "$WORK/llama_cpp_python-$LCP.tar.gz"
echo "$BIN"
