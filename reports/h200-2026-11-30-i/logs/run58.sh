#!/usr/bin/env bash
# Session 9 run 58: the segmented scan's carry fold reading eight aggregates ahead of their
# combines (on ebd6545, which stages them through shared memory): the segmented GPU tests, ctest -L
# gpu, verify --quick, memcheck/racecheck on the segmented tests, a bench of CUB's reduction with
# the families.
set -uo pipefail
O=$OUT/r
mkdir -p $O
export SUMLAB_GIT_COMMIT="$(cut -d' ' -f1 .debs/commit.txt) + the carry fold reading 8 ahead (working tree)"
T0=$SECONDS
export PATH="$PATH:/usr/local/cuda/bin"
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
echo "setup rc=$? at $((SECONDS-T0))s"; tail -2 $O/setup-console.log
U=/tmp/sumlab-deps/usr
export LD_LIBRARY_PATH=$U/lib/x86_64-linux-gnu
hdr() { echo "# commit: $SUMLAB_GIT_COMMIT"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: $*"; }
run() { local f=$1 lim=$2; shift 2; { hdr "$@"; timeout $lim "$@"; echo "# exit $?"; } > $O/$f 2>&1; echo "$f done at $((SECONDS-T0))s"; }
run segmented_test.log 200 build/cuda/tests/gpu_segmented_test
grep -E "OK|PASSED|FAILED|Failure" $O/segmented_test.log | head -8
run ctest_gpu.log 200 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed" $O/ctest_gpu.log
run verify_quick.log 60 build/cuda/sumlab verify --quick
grep -E "^total|# exit" $O/verify_quick.log | head -5
run memcheck_segmented.log 200 compute-sanitizer --tool memcheck --error-exitcode 99 build/cuda/tests/gpu_segmented_test --gtest_filter=*Float32*
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/memcheck_segmented.log | tail -3
run racecheck_segmented.log 200 compute-sanitizer --tool racecheck --error-exitcode 99 build/cuda/tests/gpu_segmented_test --gtest_filter=*RunToRun*
grep -E "RACECHECK SUMMARY|PASSED|FAILED|# exit" $O/racecheck_segmented.log | tail -3
BUILD=build/cuda OUT=$O/bench SUMLAB_BENCH_SECONDS=200 SUMLAB_BENCH_ARGS="--no-cpu --samples 9 --log2-min 20 --log2-max 30 --log2-step 2 --dtypes float32,float64 --kernels gpu_cub" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench at $((SECONDS-T0))s: $(tail -1 $O/bench/bench.log)"
grep -E "segmented_scan|cub_segmented_reduce" $O/bench/bench/bench_families.csv | cut -d, -f1,2,4,7 | head -30
(cd $OUT && tar czf $OUT/r.tgz r)
echo "end at $((SECONDS-T0))s"
