#!/usr/bin/env bash
# The Python package's part of the test suite: a venv of pinned PyPI
# packages (python/requirements-dev.txt) in ${ASSAY_VENV:-.venv}, the wheel
# built by maturin in cargo's dev profile (sharing target/debug with
# `cargo test`), installed into the venv, then mypy's stubtest (the
# installed extension against its stub, python/assay/_assay.pyi), ruff and
# pytest (whose test_docs_examples.py runs the docs' examples with the
# local models of scripts/fetch-models.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/python-env.sh

wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
(cd python && "$venv_python" -m maturin build --quiet --profile dev --locked \
    --interpreter "$venv_python" --out "$wheels")
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheels"/*.whl

# The stub says what the compiled module has: every name, parameter name,
# kind and default, read from the installed wheel. Run from the wheel's
# scratch folder, so that `import assay` is not the source folder and
# mypy's cache goes when the folder does.
(cd "$wheels" && "$venv_python" -m mypy.stubtest assay._assay)

# The loopback judge the tests start as a process.
cargo build --quiet --locked -p assay-test-server --bin loopback-judge

"$venv/bin/ruff" check python
"$venv/bin/ruff" format --check python
# From python/tests, so that `import assay` finds the installed wheel, not
# the source folder.
(cd python/tests && "../../$venv/bin/python" -m pytest -q -p no:cacheprovider .)
