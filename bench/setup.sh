#!/usr/bin/env bash
# Creates bench/.venv with the pinned Python references (bench/requirements.txt).
# Idempotent: does nothing when the venv already holds exactly these pins.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
requirements="$here/requirements.txt"
stamp="$venv/.requirements.sha256"
python="${PYTHON:-python3}"

want="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    exit 0
fi

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 9))'; then
    echo "setup.sh: $python is older than Python 3.9" >&2
    exit 1
fi

echo "setup.sh: installing the Python references into $venv" >&2
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
echo "$want" > "$stamp"
