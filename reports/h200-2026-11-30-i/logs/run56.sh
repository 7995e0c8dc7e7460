#!/usr/bin/env bash
# Session 9 run 56: the device check's build now includes bench_test (gpu/bench.hpp's timing tests,
# the families test among them), which runs 1-55 never built: bench_test and ctest -L gpu.
set -uo pipefail
O=$OUT/r
mkdir -p $O
export SUMLAB_GIT_COMMIT="$(cut -d' ' -f1 .debs/commit.txt) + the families bench (working tree)"
T0=$SECONDS
export PATH="$PATH:/usr/local/cuda/bin"
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
echo "setup rc=$? at $((SECONDS-T0))s"; tail -2 $O/setup-console.log
U=/tmp/sumlab-deps/usr
export LD_LIBRARY_PATH=$U/lib/x86_64-linux-gnu
hdr() { echo "# commit: $SUMLAB_GIT_COMMIT"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: $*"; }
run() { local f=$1 lim=$2; shift 2; { hdr "$@"; timeout $lim "$@"; echo "# exit $?"; } > $O/$f 2>&1; echo "$f done at $((SECONDS-T0))s"; }
run bench_test.log 120 build/cuda/tests/bench_test
grep -E "OK|PASSED|FAILED|SKIPPED|Failure" $O/bench_test.log | head -8
run ctest_gpu.log 200 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed" $O/ctest_gpu.log
run memcheck_families.log 200 compute-sanitizer --tool memcheck --error-exitcode 99 build/cuda/tests/bench_test --gtest_filter=*Families*
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/memcheck_families.log | tail -3
(cd $OUT && tar czf $OUT/r.tgz r)
echo "end at $((SECONDS-T0))s"
