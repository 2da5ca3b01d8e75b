#!/usr/bin/env bash
# assay's Python scorers side by side with rouge-score, nltk and sacreBLEU:
# the pinned references in bench/.venv (setup.sh), assay's wheel built in
# release by maturin (pinned in requirements.txt) and installed there, then
# bench/python_scorers.py. Knob: PAIRS (3000).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/setup.sh"
python="$here/.venv/bin/python"
wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
(cd "$here/../python" && "$python" -m maturin build --quiet --release --locked \
    --interpreter "$python" --out "$wheels")
"$python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheels"/*.whl
"$python" "$here/python_scorers.py"
