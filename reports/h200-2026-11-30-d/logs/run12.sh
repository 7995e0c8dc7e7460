#!/usr/bin/env bash
# Session 4 run 12: A/B of the fixed-point kernel's bytes loaded ahead per thread (64 as committed,
# then 128 by sed), the given-k sum against CUB, float32 and float64, plus gpu tests at 128.
set -uo pipefail
O=$OUT/r
mkdir -p $O
export SUMLAB_GIT_COMMIT=$(cut -d' ' -f1 .debs/commit.txt)
T0=$SECONDS
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
echo "setup rc=$? at $((SECONDS-T0))s"; tail -1 $O/setup-console.log
U=/tmp/sumlab-deps/usr
export CMAKE_PREFIX_PATH=$U CPATH="$U/include:$U/include/x86_64-linux-gnu:$U/include/eigen3" LIBRARY_PATH=$U/lib/x86_64-linux-gnu LD_LIBRARY_PATH=$U/lib/x86_64-linux-gnu
export PATH="$PATH:/usr/local/cuda/bin"
hdr() { echo "# commit: $SUMLAB_GIT_COMMIT"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: $*"; }
run() { local f=$1 lim=$2; shift 2; { hdr "$@"; timeout $lim "$@"; echo "# exit $?"; } > $O/$f 2>&1; echo "$f done at $((SECONDS-T0))s"; }
pack() { (cd $OUT && tar czf $OUT/r.tgz r); }
B="--sweep --no-cpu --samples 9 --log2-min 24 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_cub --exact-dists uniform"
OUT=$O/b64 SUMLAB_BENCH_SECONDS=100 SUMLAB_BENCH_ARGS="$B" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench 64 at $((SECONDS-T0))s"; pack
sed -i "s/inline constexpr int fixed_ahead_bytes = 64;/inline constexpr int fixed_ahead_bytes = 128;/" gpu/device/kernels/fixed_point_kernels.cuh && grep -c "fixed_ahead_bytes = 128" gpu/device/kernels/fixed_point_kernels.cuh > $O/patch.log && cmake --build build/cuda >> $O/patch.log 2>&1
echo "rebuild rc=$? at $((SECONDS-T0))s"
OUT=$O/b128 SUMLAB_BENCH_SECONDS=100 SUMLAB_BENCH_ARGS="$B" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench 128 at $((SECONDS-T0))s"; pack
run ctest_gpu_128.log 170 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed" $O/ctest_gpu_128.log
pack
