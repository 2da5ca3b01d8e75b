# Sourced by the Python scripts: makes the project's venv
# (${ASSAY_VENV:-.venv}, pinned packages of python/requirements-dev.txt)
# and sets $venv_python to its interpreter's absolute path.
venv="${ASSAY_VENV:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check -r python/requirements-dev.txt
# DeepEval, for its ConversationalTestCase objects only, without its
# dependencies: it holds click below 8.4 where huggingface-hub needs 8.4.2,
# and its test-case classes import without them.
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps deepeval==4.3.1
venv_python="$(cd "$venv" && pwd)/bin/python"
