#!/usr/bin/env bash
# Builds and runs rfa_combine.cpp against the pinned CCCL headers (scripts/cccl.sh installs them into
# build/venv), with rfa.cuh's one __shared__ array made a static one so that the host compiler takes
# it and its private members public so that the program can read the primaries; writes
# rfa_combine.log beside this script. Needs g++ with libquadmath.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
scripts/cccl.sh
include=$(ls -d build/venv/lib/python3*/site-packages/nvidia/cu13/include/cccl 2> /dev/null | head -1)
[ -n "$include" ] || { echo "run.sh: no CCCL headers in build/venv (scripts/cccl.sh needs nvcc and PyPI)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/cub/detail"
sed -e 's/static __shared__ FType bin_computed_array/static FType bin_computed_array/' -e 's/^private:/public:/' \
  "$include/cub/detail/rfa.cuh" > "$tmp/cub/detail/rfa.cuh"
g++ -std=c++20 -O2 -ffp-contract=off -I"$tmp" -I"$include" "$here/rfa_combine.cpp" -o "$tmp/rfa_combine" -lquadmath
{
  echo "# reports/cpu/rfa/run.sh at $(git rev-parse --short HEAD), $(date -u +%FT%TZ), $(g++ --version | head -1)"
  echo "# CCCL: $(grep -m1 'define CCCL_VERSION' "$include/cuda/std/__cccl/version.h")"
  "$tmp/rfa_combine"
} > "$here/rfa_combine.log"
cat "$here/rfa_combine.log"
