#!/usr/bin/env bash
# Session 6 run 25: even split of the bulk-loaded input over the blocks (A) against round-robin
# whole tiles (B, c7026dc's bulk_loads.cuh) and A with 4 stages for 512-thread blocks (C); the
# exact kernel's 256-thread build for 2 blocks/SM. Tests: bulk/exact/fixed, GpuBench, ctest -L gpu, verify --quick.
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
run bulk_tests.log 90 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*:GpuFixedPointGivenScale*:GpuExact*'
grep -E "PASSED|FAILED|# exit" $O/bulk_tests.log | tail -3
run ctest_gpu.log 150 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed|Failed|FAILED" $O/ctest_gpu.log | head
run verify_quick.log 80 build/cuda/sumlab verify --quick
grep -E "gpu_exact|gpu_fixed|^total|mismatch|# exit" $O/verify_quick.log | head -6
pack
B="--sweep --no-cpu --samples 9 --log2-min 24 --dtypes float32 --kernels gpu_fixed_point,gpu_exact,gpu_cub --exact-dists uniform"
bench() { OUT=$O/bench_$1 SUMLAB_BENCH_SECONDS=70 SUMLAB_BENCH_ARGS="$B" bash scripts/device-bench.sh > /dev/null 2>&1; echo "bench $1 at $((SECONDS-T0))s"; tail -1 $O/bench_$1/bench.log; pack; }
bench A
cp gpu/thread/bulk_loads.cuh /tmp/A.cuh
sed -i 's/block <= 512 ? 3 : 2/block <= 512 ? 4 : 2/' gpu/thread/bulk_loads.cuh
grep -n "bulk_stages(int" gpu/thread/bulk_loads.cuh
bench C
cp .debs/bulk_loads_rr.cuh gpu/thread/bulk_loads.cuh
bench B
cp /tmp/A.cuh gpu/thread/bulk_loads.cuh
echo "end at $((SECONDS-T0))s"
