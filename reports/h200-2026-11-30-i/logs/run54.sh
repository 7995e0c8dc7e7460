#!/usr/bin/env bash
# Session 9 run 54: main with the CPU exact sum's AVX2 window path (a485632): ctest -L gpu (the GPU
# sums against the CPU exact sum), verify --quick, and the CPU bench on the device's host CPU, 3 runs.
set -uo pipefail
O=$OUT/r
mkdir -p $O
export SUMLAB_GIT_COMMIT=$(cut -d' ' -f1 .debs/commit.txt)
T0=$SECONDS
export PATH="$PATH:/usr/local/cuda/bin"
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
echo "setup rc=$? at $((SECONDS-T0))s"; tail -2 $O/setup-console.log
U=/tmp/sumlab-deps/usr
export LD_LIBRARY_PATH=$U/lib/x86_64-linux-gnu
hdr() { echo "# commit: $SUMLAB_GIT_COMMIT"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) ($(nproc) cores), avx2: $(grep -c -m1 avx2 /proc/cpuinfo)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: $*"; }
run() { local f=$1 lim=$2; shift 2; { hdr "$@"; timeout $lim "$@"; echo "# exit $?"; } > $O/$f 2>&1; echo "$f done at $((SECONDS-T0))s"; }
run ctest_gpu.log 150 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed" $O/ctest_gpu.log
run exact_tests.log 60 bash -c "build/cuda/tests/exact_window_test && build/cuda/tests/exact_sum_test"
grep -E "PASSED|FAILED|SKIPPED" $O/exact_tests.log
run verify_quick.log 60 build/cuda/sumlab verify --quick
grep -E "^total|# exit" $O/verify_quick.log | head -5
for i in 1 2 3; do run cpu_bench$i.log 60 build/cuda/sumlab bench --no-gpu --force --out $O/cpu_bench$i; grep -E "^float64,(serial|exact)," $O/cpu_bench$i/bench_cpu.csv; done
(cd $OUT && tar czf $OUT/r.tgz r)
echo "end at $((SECONDS-T0))s"
