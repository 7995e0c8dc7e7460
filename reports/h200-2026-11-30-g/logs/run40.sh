#!/usr/bin/env bash
# Session 7 run 40: the check of main's GPU code after the digit helpers moved to the order model
# (and gpu_exact's range slots sized by Range): tests, verify, stresses, memcheck, racecheck, and a
# short bench of the integer sums against CUB.
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
bench() { local name=$1 lim=$2 args=$3; OUT=$O/$name SUMLAB_BENCH_SECONDS=$lim SUMLAB_BENCH_ARGS="$args" bash scripts/device-bench.sh > /dev/null 2>&1; echo "$name at $((SECONDS-T0))s: $(tail -1 $O/$name/bench.log) repeated-launch errors: $(grep -c 'repeated launches' $O/$name/bench/bench_gpu.csv)"; pack; }
run gpu_tests.log 90 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*:GpuFixedPoint*:GpuExact*'
grep -E "PASSED|FAILED|# exit" $O/gpu_tests.log | tail -3
run ctest_gpu.log 150 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed" $O/ctest_gpu.log
run verify_quick.log 60 build/cuda/sumlab verify --quick
grep -E "gpu_exact|gpu_fixed|^total|# exit" $O/verify_quick.log | head -6
pack
bench bench 60 "--sweep --no-cpu --samples 9 --log2-min 24 --log2-max 28 --log2-step 2 --dtypes float32 --kernels gpu_fixed_point,gpu_exact,gpu_cub --exact-dists uniform"
for i in 1 2; do bench stress$i 40 "--sweep --no-cpu --samples 3 --log2-min 24 --log2-max 26 --log2-step 1 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_exact"; done
run memcheck.log 90 compute-sanitizer --tool memcheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuFixedPoint*:GpuExactAndFixedPoint*'
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/memcheck.log | tail -3
run racecheck.log 60 compute-sanitizer --tool racecheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuFixedPointGivenScale/0*'
grep -E "RACECHECK SUMMARY|PASSED|FAILED|# exit" $O/racecheck.log | tail -3
pack
echo "end at $((SECONDS-T0))s"
