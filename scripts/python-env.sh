# Sourced by the Python scripts: makes the project's venv
# (${ASSAY_VENV:-.venv}, pinned packages of python/requirements-dev.txt)
# and sets $venv_python to its interpreter's absolute path.
venv="${ASSAY_VENV:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r python/requirements-dev.txt
venv_python="$(cd "$venv" && pwd)/bin/python"
