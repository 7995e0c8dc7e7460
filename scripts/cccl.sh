#!/usr/bin/env bash
# CCCL headers newer than CUDA 13.0's (3.0.1), for the peer gpu_cub_gpu_to_gpu (CUB's gpu_to_gpu
# determinism, CCCL >= 3.1): PyPI's nvidia-cuda-cccl, pinned, into build/venv, where
# cmake/SumlabCuda.cmake finds it. Only where nvcc is (the headers are CUDA's). Idempotent; without
# network or PyPI it says so and the build goes on without the peer.
set -euo pipefail
cd "$(dirname "$0")/.."
version=13.3.5.0.6
command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ] || exit 0
venv=build/venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
installed=$("$venv/bin/python" -m pip show nvidia-cuda-cccl 2> /dev/null | sed -n 's/^Version: //p')
if [ "$installed" != "$version" ]; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps "nvidia-cuda-cccl==$version" ||
    echo "cccl: could not install nvidia-cuda-cccl $version; gpu_cub_gpu_to_gpu is left out of this build" >&2
fi
