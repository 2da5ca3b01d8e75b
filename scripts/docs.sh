#!/usr/bin/env bash
# Builds the documentation site (mkdocs.yml: strict, so a broken link or a
# page left out of the nav fails) into target/docs-site/, and checks that
# docs/metrics.md is what the registry generates. Uses the project's venv
# (scripts/python-env.sh, which installs the pinned mkdocs) and the `assay`
# command that scripts/python-test.sh installed there with the wheel, so
# nothing is built twice; ASSAY_BIN names another `assay`.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/python-env.sh

assay_bin="${ASSAY_BIN:-$venv/bin/assay}"
if [ ! -x "$assay_bin" ]; then
    echo "docs.sh: $assay_bin is missing: run scripts/python-test.sh (it installs the wheel) or set ASSAY_BIN" >&2
    exit 1
fi

# Not --quiet: it hides the warnings that strict mode counts, and passes.
"$venv/bin/mkdocs" build --strict --site-dir target/docs-site
"$assay_bin" metrics --format json | "$venv_python" scripts/gen-metrics-doc.py --check docs/metrics.md
echo "docs.sh: site built in target/docs-site; docs/metrics.md matches the registry" >&2
