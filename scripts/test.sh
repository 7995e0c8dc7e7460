#!/usr/bin/env bash
# Quick start, command 2: install what is missing, build everything once (the lab, its tests and
# the Python extension), run the GoogleTest suites through ctest, build the Python wheel from the
# same build folder (nothing compiles twice), install it and run the Python tests.
# GPU tests (label gpu) skip with a message on a machine without a CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${SUMLAB_PRESET:-release}
scripts/install-deps.sh
scripts/python-env.sh  # build/venv: numpy, pytest, nanobind, scikit-build-core, ml_dtypes (PyPI)
python=$PWD/build/venv/bin/python
SUMLAB_CMAKE_ARGS="-DPython_EXECUTABLE=$python" scripts/build.sh "$preset"
# What the GPU side can do here: the reason the gpu-labelled tests skip, if they do.
"build/$preset/sumlab" --version | sed 's/^/sumlab: /'
ctest --preset "$preset" "$@"
"$python" -m pip wheel . -q --no-build-isolation --no-deps -w build/wheel -Cbuild-dir="build/$preset" \
  -Ccmake.define.SUMLAB_TESTS=ON -Ccmake.define.SUMLAB_BENCH=ON
"$python" -m pip install -q --force-reinstall --no-deps build/wheel/sumlab-*.whl
# From outside the source tree, so that `import sumlab` is the installed wheel.
(cd build && SUMLAB_BINARY="$PWD/$preset/sumlab" "$python" -m pytest -q ../tests/python)
