#!/usr/bin/env bash
# Session 9 run 59: the review's mend (gpu/bench_families.cu reads the L2 size from device_info()),
# on the final tree: bench_test, ctest -L gpu, verify --quick, memcheck on the families test.
set -uo pipefail
O=$OUT/r
mkdir -p $O
export SUMLAB_GIT_COMMIT=$(cut -d' ' -f1 .debs/commit.txt)
T0=$SECONDS
export PATH="$PATH:/usr/local/cuda/bin"
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
echo "setup rc=$? at $((SECONDS-T0))s"; tail -2 $O/setup-console.log
export LD_LIBRARY_PATH=/tmp/sumlab-deps/usr/lib/x86_64-linux-gnu
hdr() { echo "# commit: $SUMLAB_GIT_COMMIT"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: $*"; }
run() { local f=$1 lim=$2; shift 2; { hdr "$@"; timeout $lim "$@"; echo "# exit $?"; } > $O/$f 2>&1; echo "$f done at $((SECONDS-T0))s"; }
run bench_test.log 120 build/cuda/tests/bench_test
grep -E "PASSED|FAILED" $O/bench_test.log | head -3
run ctest_gpu.log 200 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed" $O/ctest_gpu.log
run verify_quick.log 60 build/cuda/sumlab verify --quick
grep -E "^total|# exit" $O/verify_quick.log | head -5
run memcheck_families.log 200 compute-sanitizer --tool memcheck --error-exitcode 99 build/cuda/tests/bench_test --gtest_filter=*Families*
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/memcheck_families.log | tail -3
echo "end at $((SECONDS-T0))s"
