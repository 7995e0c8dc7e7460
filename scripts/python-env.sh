#!/usr/bin/env bash
# The Python environment of the tests: a virtual environment in build/venv with the packages of
# tests/python/requirements.txt from PyPI (numpy, pytest). Idempotent: a second run installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=build/venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
stamp="$venv/.requirements"
if ! cmp -s tests/python/requirements.txt "$stamp" 2>/dev/null; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r tests/python/requirements.txt
  cp tests/python/requirements.txt "$stamp"
fi
