#!/usr/bin/env bash
# Installs what is missing, configures and builds one preset (default: release, CUDA auto-detected).
# Usage: scripts/build.sh [preset] [cmake --build args...]
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-${SUMLAB_PRESET:-release}}
shift || true
scripts/install-deps.sh
scripts/cccl.sh  # newer CCCL headers for the peer gpu_cub_gpu_to_gpu, where nvcc is
# SUMLAB_CMAKE_ARGS: extra configure arguments (scripts/test.sh gives the Python for the package).
cmake --preset "$preset" ${SUMLAB_CMAKE_ARGS:-} >/dev/null
cmake --build --preset "$preset" -j "$(nproc)" "$@"
