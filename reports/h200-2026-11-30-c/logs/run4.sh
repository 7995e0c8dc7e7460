#!/usr/bin/env bash
# Session run 4: rebuild, gpu tests, verify --quick, memcheck, the exact/fixed bench (float32 ranges, float64).
set -uo pipefail
O=$OUT
export SUMLAB_GIT_COMMIT=$(cut -d' ' -f1 .debs/commit.txt)
T0=$SECONDS
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
echo "setup rc=$? at $((SECONDS-T0))s"; tail -2 $O/setup-console.log
U=/tmp/sumlab-deps/usr
export CMAKE_PREFIX_PATH=$U CPATH="$U/include:$U/include/x86_64-linux-gnu:$U/include/eigen3" LIBRARY_PATH=$U/lib/x86_64-linux-gnu LD_LIBRARY_PATH=$U/lib/x86_64-linux-gnu
export PATH="$PATH:/usr/local/cuda/bin"
hdr() { echo "# commit: $SUMLAB_GIT_COMMIT"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: $*"; }
run() { local f=$1 lim=$2; shift 2; { hdr "$@"; timeout $lim "$@"; echo "# exit $?"; } > $O/$f 2>&1; echo "$f done at $((SECONDS-T0))s"; }
run ctest_gpu.log 150 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed|Failed|\*\*\*" $O/ctest_gpu.log | head
run verify_quick.log 100 build/cuda/sumlab verify --quick
grep -E "^total|# exit" $O/verify_quick.log | tail -5
run memcheck_exact.log 100 compute-sanitizer --tool memcheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuExact*:GpuExactAndFixedPoint*'
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/memcheck_exact.log | tail -3
run ncu_balance_lognormal.log 40 ncu --kernel-name regex:exact_limbs --launch-count 1 --metrics sm__cycles_active.max,sm__cycles_active.avg,smsp__inst_executed.max,smsp__inst_executed.avg,gpu__time_duration.sum build/cuda/sumlab sum --dist lognormal -n 16777216 -a gpu_exact --backend cuda --grid 132 --block 512
grep -E "sm__|smsp__|gpu__" $O/ncu_balance_lognormal.log
LEFT=$((575 - (SECONDS-T0)))
OUT=$O/bexact SUMLAB_BENCH_SECONDS=$LEFT SUMLAB_BENCH_ARGS="--sweep --no-cpu --samples 9 --log2-min 24 --kernels gpu_exact,gpu_fixed_point,gpu_two_pass,gpu_kahan,gpu_cub --exact-dists normal,lognormal,cancellation,lognormal:12" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench at $((SECONDS-T0))s"; tail -3 $O/bexact/bench.log
