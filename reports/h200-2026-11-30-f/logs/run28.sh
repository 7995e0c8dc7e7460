#!/usr/bin/env bash
# Session 6 run 28: the check of the kept code (whole tiles round-robin, c7026dc's bulk loads;
# gpu_exact's 256-thread build for 2 blocks per SM; the bulk-load test with -0 inputs): the bench
# of every sum kernel issue 9 names against CUB, the adversarial range, three repeated-launch
# stresses of the fixed-point sums over every sweep shape, ctest -L gpu, verify --quick,
# racecheck, memcheck and synccheck over the bulk-load tests.
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
left() { local want=$(( $1 / 2 )); if (( SECONDS - T0 + want > 570 )); then echo "skipped (time) at $((SECONDS-T0))s"; return 1; fi; }
run() { local f=$1 lim=$2; shift 2; left $lim || return 0; { hdr "$@"; timeout $lim "$@"; echo "# exit $?"; } > $O/$f 2>&1; echo "$f done at $((SECONDS-T0))s"; }
pack() { (cd $OUT && tar czf $OUT/r.tgz r); }
bench() { local name=$1 lim=$2 args=$3; left $lim || return 0; OUT=$O/$name SUMLAB_BENCH_SECONDS=$lim SUMLAB_BENCH_ARGS="$args" bash scripts/device-bench.sh > /dev/null 2>&1; echo "$name at $((SECONDS-T0))s: $(tail -1 $O/$name/bench.log) repeated-launch errors: $(grep -c 'repeated launches' $O/$name/bench/bench_gpu.csv)"; pack; }
run bulk_tests.log 60 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*:GpuFixedPointGivenScale*:GpuExact*'
grep -E "PASSED|FAILED|# exit" $O/bulk_tests.log | tail -3
run ctest_gpu.log 120 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed" $O/ctest_gpu.log
run verify_quick.log 60 build/cuda/sumlab verify --quick
grep -E "gpu_exact|gpu_fixed|^total|# exit" $O/verify_quick.log | head -6
pack
bench bench 150 "--sweep --no-cpu --samples 9 --log2-min 24 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_exact,gpu_two_pass,gpu_kahan,gpu_cub --exact-dists uniform,normal,lognormal"
bench bench_range 50 "--no-cpu --samples 5 --log2-min 24 --log2-step 6 --dtypes float32 --kernels gpu_exact,gpu_cub --dists lognormal:12 --exact-dists lognormal:12"
for i in 1 2 3; do bench stress$i 40 "--sweep --no-cpu --samples 3 --log2-min 24 --log2-max 26 --log2-step 1 --dtypes float32,float64 --kernels gpu_fixed_point"; done
run racecheck_bulk.log 90 compute-sanitizer --tool racecheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads/0*:GpuFixedPointGivenScale/0*'
grep -E "RACECHECK SUMMARY|PASSED|FAILED|# exit" $O/racecheck_bulk.log | tail -3
pack
run memcheck_bulk.log 90 compute-sanitizer --tool memcheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*:GpuFixedPointGivenScale*:GpuExact*'
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/memcheck_bulk.log | tail -3
pack
run synccheck_bulk.log 50 compute-sanitizer --tool synccheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*'
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/synccheck_bulk.log | tail -3
pack
echo "end at $((SECONDS-T0))s"
