#!/usr/bin/env bash
# Session 5 run 24: the final check of main's GPU code (run 23 measured an atomic-totals end for gpu_exact, since dropped): the bench of every sum kernel issue 9 names
# against CUB (float32, float64; uniform, normal, lognormal for the exact sum), the adversarial
# range (lognormal:12), ctest -L gpu, verify --quick, memcheck, racecheck and synccheck over the
# bulk-load and fixed-point tests, memcheck over verify --quick --shapes 8.
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
OUT=$O/bench SUMLAB_BENCH_SECONDS=150 SUMLAB_BENCH_ARGS="--sweep --no-cpu --samples 9 --log2-min 24 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_exact,gpu_two_pass,gpu_kahan,gpu_cub --exact-dists uniform,normal,lognormal" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench at $((SECONDS-T0))s"; tail -1 $O/bench/bench.log
pack
OUT=$O/bench_range SUMLAB_BENCH_SECONDS=60 SUMLAB_BENCH_ARGS="--no-cpu --samples 5 --log2-min 24 --log2-step 6 --dtypes float32 --kernels gpu_exact,gpu_cub --dists lognormal:12 --exact-dists lognormal:12" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench range at $((SECONDS-T0))s"; tail -1 $O/bench_range/bench.log
pack
run ctest_gpu.log 170 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed" $O/ctest_gpu.log
run verify_quick.log 90 build/cuda/sumlab verify --quick
grep -E "gpu_exact|gpu_fixed|^total|# exit" $O/verify_quick.log | head -6
run memcheck_bulk.log 120 compute-sanitizer --tool memcheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*:GpuFixedPointGivenScale*:GpuExact*'
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/memcheck_bulk.log | tail -3
pack
run memcheck_verify.log 120 compute-sanitizer --tool memcheck --error-exitcode 99 build/cuda/sumlab verify --quick --shapes 8
grep -E "ERROR SUMMARY|# exit" $O/memcheck_verify.log | tail -2
run synccheck_bulk.log 60 compute-sanitizer --tool synccheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*'
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/synccheck_bulk.log | tail -3
pack
