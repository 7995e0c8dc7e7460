#!/usr/bin/env bash
# Session 5 run 22: A/B of the bulk tiles' claims two ahead against tiles dealt round robin
# (bulk_claims = false by sed): the bulk-path gpu tests, then the bench of both, float32 and float64.
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
run bulk_tests.log 60 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*:GpuFixedPointGivenScale*:GpuExact*'
grep -E "PASSED|FAILED|# exit" $O/bulk_tests.log | tail -3
B="--sweep --no-cpu --samples 9 --log2-min 24 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_exact,gpu_cub --exact-dists uniform"
OUT=$O/bench SUMLAB_BENCH_SECONDS=100 SUMLAB_BENCH_ARGS="$B" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench at $((SECONDS-T0))s"; tail -1 $O/bench/bench.log
pack
sed -i "s/inline constexpr bool bulk_claims = true;/inline constexpr bool bulk_claims = false;/" gpu/thread/bulk_loads.cuh && grep -c "bulk_claims = false" gpu/thread/bulk_loads.cuh > $O/ab_build.log && cmake --build build/cuda --target sumlab >> $O/ab_build.log 2>&1
echo "AB rebuild rc=$? at $((SECONDS-T0))s"
OUT=$O/bench_static SUMLAB_BENCH_SECONDS=100 SUMLAB_BENCH_ARGS="$B" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench static at $((SECONDS-T0))s"; tail -1 $O/bench_static/bench.log
pack
