#!/usr/bin/env bash
# Session 4 run 14: A/B of pipelined loads in the fixed-point kernel (off as committed,
# then on by sed), the given-k sum against CUB, float32 and float64, plus gpu tests with it on.
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
OUT=$O/boff SUMLAB_BENCH_SECONDS=100 SUMLAB_BENCH_ARGS="$B" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench off at $((SECONDS-T0))s"; pack
sed -i "s/inline constexpr bool fixed_pipelined = false;/inline constexpr bool fixed_pipelined = true;/" gpu/device/kernels/fixed_point_kernels.cuh && grep -c "fixed_pipelined = true" gpu/device/kernels/fixed_point_kernels.cuh > $O/patch.log && cmake --build build/cuda >> $O/patch.log 2>&1
echo "rebuild rc=$? at $((SECONDS-T0))s"
OUT=$O/bon SUMLAB_BENCH_SECONDS=100 SUMLAB_BENCH_ARGS="$B" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench on at $((SECONDS-T0))s"; pack
run ctest_gpu_on.log 170 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed" $O/ctest_gpu_on.log
pack
