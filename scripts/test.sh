#!/usr/bin/env bash
# Quick start, command 2: install what is missing, build everything, run the whole test suite:
# the GoogleTest suites through ctest, then the Python tests (pytest, numpy from PyPI).
# GPU tests (label gpu) skip with a message on a machine without a CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${SUMLAB_PRESET:-release}
scripts/build.sh "$preset"
ctest --preset "$preset" "$@"
scripts/python-env.sh
SUMLAB_BINARY="build/$preset/sumlab" build/venv/bin/python -m pytest -q tests/python
