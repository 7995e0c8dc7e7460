#!/usr/bin/env bash
# Session 4 run 15: verify with the caller's-scale cases: gpu tests, verify --quick, memcheck over verify --quick --shapes 8.
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
run ctest_gpu.log 170 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed" $O/ctest_gpu.log
run verify_quick.log 90 build/cuda/sumlab verify --quick
grep -E "^sumlab|# exit" $O/verify_quick.log | tail -2
run memcheck_quick.log 100 compute-sanitizer --tool memcheck --error-exitcode 99 build/cuda/sumlab verify --quick --shapes 8
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/memcheck_quick.log | tail -3
pack
