#!/usr/bin/env bash
# CCCL headers newer than CUDA 13.0's (3.0.1), for the peer gpu_cub_gpu_to_gpu (CUB's gpu_to_gpu
# determinism, CCCL >= 3.1): PyPI's nvidia-cuda-cccl, pinned, into build/venv, where
# cmake/SumlabCuda.cmake finds it. Only where nvcc is (the headers are CUDA's). Idempotent; without
# network or PyPI it says so and the build goes on without the peer.
# `scripts/cccl.sh --carry` also packs the headers the peer needs (cub, cuda, nv, thrust: 1.5 MB
# of xz) into .cccl/ (git-ignored) for a device machine without network: scripts/device-session.sh
# unpacks them there (the device tool carries at most 64 MiB with the tree).
set -euo pipefail
cd "$(dirname "$0")/.."
version=13.3.5.0.6
command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ] || exit 0
venv=build/venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
installed=$("$venv/bin/python" -m pip show nvidia-cuda-cccl 2> /dev/null | sed -n 's/^Version: //p' || true)
if [ "$installed" != "$version" ]; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps "nvidia-cuda-cccl==$version" ||
    echo "cccl: could not install nvidia-cuda-cccl $version; gpu_cub_gpu_to_gpu is left out of this build" >&2
fi
if [ "${1:-}" = "--carry" ]; then
  include=$(ls -d "$venv"/lib/python3*/site-packages/nvidia/cu13/include/cccl | head -1)
  mkdir -p .cccl
  tar cJf .cccl/cccl-headers.tar.xz -C "$include" cub cuda nv thrust
  echo "cccl: $(du -h .cccl/cccl-headers.tar.xz | cut -f1) in .cccl/cccl-headers.tar.xz (carry .cccl)"
fi
