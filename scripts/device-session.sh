#!/usr/bin/env bash
# device-session: one device call (under 10 minutes) that checks the tree on a lent H200 after a
# change to the host or Python layers, most important first, each step under a time limit cut to
# a deadline so that the call always returns what it got:
#   1. set-up (the carried MPFR/GMP .debs) and a build of everything (`cuda` preset, sm_90, the
#      Python extension included)                                          -> setup.log
#   2. ctest -L gpu, and the CLI test of the seed figures (atomics)        -> ctest_gpu.log
#   3. the Python package on CUDA arrays (torch, CuPy, JAX; in place)      -> pytest_device.log
#   4. sumlab verify --quick (GPU bits == model bits)                      -> verify.log
#   5. the golden bits of data/golden re-checked                           -> golden.log
#   6. the CUDA example plugin: bench against CUB, determinism             -> plugin-bench/, plugin-determinism/
#      what the Python face adds (bench/python_overhead.py)               -> python_overhead.log/.json
#   7. examples/cuda_kernel_subject.py (CuPy and Triton kernels as subjects) -> my-kernel/
#      examples/framework_reductions.py, each framework alone, then all, in every study,
#      sumlab's kernels beside them (SUMLAB_FW_RUNS, _SIZES, _LOG2_MAX, _STUDIES, _RESUME, _SECONDS,
#      _PROBES) -> frameworks/
#   8. SUMLAB_DETERMINISM=1: the canonical determinism run                 -> determinism/
#   9. the rest of the test suite, with a GPU present (SUMLAB_SKIP_REST skips) -> ctest_rest.log
# Usage: scripts/device-stamp.sh and scripts/cccl.sh --carry here, then (device tool, carry .debs and .cccl):
# OUT=$OUT SUMLAB_DEBS=.debs scripts/device-session.sh
# Everything is packed into $OUT/session.tar.gz; console.log travels beside it.
set -uo pipefail
OUT=${OUT:-$PWD/out/device-session}
SCRIPT=device-session
T0=$SECONDS
DEADLINE=${SUMLAB_DEADLINE:-540}
mkdir -p "$OUT/logs"
# shellcheck source=scripts/device-lib.sh
source scripts/device-lib.sh
L=$OUT/logs
export PYTHONUNBUFFERED=1 SUMLAB_NO_REPORT=1

# --- 1. set-up and build -------------------------------------------------------------------------
PREFIX=/tmp/sumlab-deps
if [ ! -e /usr/include/mpfr.h ] && [ -d "${SUMLAB_DEBS:-.debs}" ]; then
  mkdir -p "$PREFIX"
  for f in "${SUMLAB_DEBS:-.debs}"/*.deb; do dpkg-deb -x "$f" "$PREFIX"; done
  for pc in "$PREFIX"/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc; do [ -f "$pc" ] && sed -i "s#=/usr#=$PREFIX/usr#g" "$pc"; done
  U=$PREFIX/usr
  export CMAKE_PREFIX_PATH=$U CPATH="$U/include:$U/include/x86_64-linux-gnu" LIBRARY_PATH="$U/lib/x86_64-linux-gnu"
  export LD_LIBRARY_PATH="$U/lib/x86_64-linux-gnu" PKG_CONFIG_PATH="$U/lib/x86_64-linux-gnu/pkgconfig"
fi
# The peer gpu_cub_gpu_to_gpu's newer CCCL headers, carried in .cccl (scripts/cccl.sh --carry).
if [ -z "${SUMLAB_CCCL_INCLUDE_DIR:-}" ] && [ -f .cccl/cccl-headers.tar.xz ]; then
  mkdir -p /tmp/sumlab-cccl && tar xJf .cccl/cccl-headers.tar.xz -C /tmp/sumlab-cccl
  export SUMLAB_CCCL_INCLUDE_DIR=/tmp/sumlab-cccl
fi
header "$L/setup.log" "cmake --preset cuda -DSUMLAB_BENCH=OFF; cmake --build --preset cuda"
{ nvidia-smi | head -12; python3 -c 'import torch, numpy; print("torch", torch.__version__, "numpy", numpy.__version__)'; } >> "$L/setup.log" 2>&1
say "configure + build"
# The full session keeps room after the build for its steps; a caller that sources this for the
# set-up alone (SUMLAB_SETUP_ONLY) keeps SUMLAB_SETUP_RESERVE seconds (30 by default) for its own,
# whose limits it sets: a deadline below the full session's reserves otherwise cut the build short.
if [ -n "${SUMLAB_SETUP_ONLY:-}" ]; then
  configure_reserve=${SUMLAB_SETUP_RESERVE:-30} build_reserve=${SUMLAB_SETUP_RESERVE:-30}
else
  configure_reserve=420 build_reserve=200
fi
timeout "$(limit 60 "$configure_reserve")" cmake --preset cuda -DSUMLAB_BENCH=OFF -DPython_EXECUTABLE="$(command -v python3)" >> "$L/setup.log" 2>&1
# SUMLAB_BUILD_TARGETS (a space-separated list): only those targets, for a call that needs few.
# shellcheck disable=SC2086
timeout "$(limit 330 "$build_reserve")" cmake --build --preset cuda -j"$(nproc)" ${SUMLAB_BUILD_TARGETS:+--target $SUMLAB_BUILD_TARGETS} -- -k 0 >> "$L/setup.log" 2>&1
rc=$?
echo "# build exit status: $rc" >> "$L/setup.log"
say "build exit $rc"
BIN=build/cuda/sumlab
[ -x "$BIN" ] || { grep -E "error|FAILED" "$L/setup.log" | head -30; exit 1; }
# Sourced with SUMLAB_SETUP_ONLY set: stop here, the build and its environment ready for the caller.
[ -n "${SUMLAB_SETUP_ONLY:-}" ] && return 0

# --- 2..7 ------------------------------------------------------------------------------------------
step "$L/ctest_gpu.log" "$(limit 100 170)" ctest --test-dir build/cuda -L gpu --output-on-failure -j4
step "$L/seed_cli.log" "$(limit 40 160)" build/cuda/tests/seed_figures_cli_test
step "$L/pytest_device.log" "$(limit 150 120)" env PYTHONPATH=build/cuda/python SUMLAB_BINARY="$PWD/$BIN" \
  python3 -m pytest -v tests/python/test_device.py tests/python/test_api.py tests/python/test_subjects.py \
  tests/python/test_kernel_examples.py
step "$L/verify.log" "$(limit 70 90)" "$BIN" verify --quick
step "$L/golden.log" "$(limit 60 60)" "$BIN" study determinism --check-golden data/golden/golden-h200.json --out "$OUT/golden"
# The CUDA example plugin (device entries) beside the lab's kernels: bench against CUB, determinism.
PLUGIN=build/cuda/plugin/libsumlab_example_cuda_plugin.so:sumlab_example_block_sum
step "$L/plugin_bench.log" "$(limit 60 120)" "$BIN" bench --no-cpu --no-families --kernels gpu_two_pass,gpu_atomic \
  --dtypes float32,float64 --exact-dists uniform --log2-min 20 --log2-max 28 --log2-step 4 --plugin "$PLUGIN" \
  --out "$OUT/plugin-bench"
step "$L/plugin_determinism.log" "$(limit 60 120)" "$BIN" study determinism --backend cuda --kernels gpu_two_pass,gpu_atomic \
  --sizes 2^20,2^24 --dtypes float32,float64 --dists normal,cancellation --runs 20 --grids SM,8SM --blocks 256 \
  --vectors 4 --mappings grid_stride --plugin "$PLUGIN" --out "$OUT/plugin-determinism"
step "$L/python_overhead.log" "$(limit 90 100)" env PYTHONPATH=build/cuda/python python3 bench/python_overhead.py \
  --binary "$BIN" --json "$L/python_overhead.json"
step "$L/cuda_kernel_subject.log" "$(limit 120 100)" env PYTHONPATH=build/cuda/python python3 \
  examples/cuda_kernel_subject.py --with cupy,triton --out "$OUT/my-kernel" --runs 20
# Each framework alone first (a crash names its culprit; faulthandler prints the Python stack),
# then all of them into one pair of run folders.
# SUMLAB_FW_PROBES=0 skips the probes (when the frameworks are known to load together).
[ "${SUMLAB_FW_PROBES:-1}" = 0 ] || for fw in torch cupy jax; do
  step "$L/frameworks-$fw.log" "$(limit 40 100)" env PYTHONPATH=build/cuda/python python3 -X faulthandler \
    examples/framework_reductions.py --frameworks $fw --out "$OUT/probe-$fw" --runs 3 --sizes 2^20 --log2-max 16 \
    --scan-sizes 2^16 --studies determinism,scan
done
step "$L/frameworks.log" "$(limit "${SUMLAB_FW_SECONDS:-120}" 60)" env PYTHONPATH=build/cuda/python python3 -X faulthandler \
  examples/framework_reductions.py --out "$OUT/frameworks" --runs "${SUMLAB_FW_RUNS:-10}" \
  --sizes "${SUMLAB_FW_SIZES:-2^20,2^24}" --log2-max "${SUMLAB_FW_LOG2_MAX:-24}" \
  --studies "${SUMLAB_FW_STUDIES:-determinism,error-vs-n}" ${SUMLAB_FW_RESUME:+--resume}
# The canonical determinism run (data/h200/determinism), when asked for.
if [ -n "${SUMLAB_DETERMINISM:-}" ]; then
  step "$L/determinism.log" "$(limit 240 15)" "$BIN" study determinism --backend cuda --out "$OUT/determinism" \
    --sizes 2^20,2^24 --dtypes float32,float64 --dists uniform,normal,cancellation --runs 20 --max-shape-seconds 0.25
fi
[ -z "${SUMLAB_SKIP_REST:-}" ] && step "$L/ctest_rest.log" "$(limit 200 10)" ctest --test-dir build/cuda -LE gpu --output-on-failure -j8 --timeout 150

say "packing"
(cd "$OUT" && tar -czf session.tar.gz logs $(ls -d frameworks probe-* golden determinism plugin-* my-kernel 2>/dev/null))
find "$OUT" -mindepth 1 -maxdepth 1 ! -name session.tar.gz -exec rm -rf {} +
for f in "$L"/*.log; do echo "== $(basename "$f"): $(grep -E '^# (build )?exit status' "$f" | tail -1)"; done
say "done"
