#!/usr/bin/env bash
# Session run 2: build, all gpu tests, verify --quick, memcheck + racecheck (verify --quick and the
# exact/fixed tests), ncu of gpu_exact on uniform vs lognormal.
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
run ctest_gpu.log 170 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed|Failed|\*\*\*" $O/ctest_gpu.log | head
run verify_quick.log 100 build/cuda/sumlab verify --quick
grep -E "MISMATCH|mismatch|# exit" $O/verify_quick.log | tail -4
QUICK=(build/cuda/sumlab verify --quick --shapes 8 --dists uniform,random_bits --atomic-n 2^16 --atomic-runs 2 --atomic-samples 10)
run memcheck_quick.log 110 compute-sanitizer --tool memcheck --error-exitcode 99 "${QUICK[@]}"
grep -E "ERROR SUMMARY|# exit" $O/memcheck_quick.log | tail -2
run memcheck_exact.log 100 compute-sanitizer --tool memcheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuExact*:GpuExactAndFixedPoint*'
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/memcheck_exact.log | tail -3
run racecheck_exact.log 80 compute-sanitizer --tool racecheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuExact.Long*:GpuExactAndFixedPoint*:GpuExact.Correctly*'
grep -E "RACECHECK SUMMARY|PASSED|FAILED|# exit" $O/racecheck_exact.log | tail -3
for d in uniform lognormal; do
  run ncu_$d.log 40 ncu --kernel-name regex:exact_limbs --launch-count 1 --section SpeedOfLight --section WarpStateStats --section Occupancy --section SchedulerStats --section InstructionStats build/cuda/sumlab sum --dist $d -n 16777216 -a gpu_exact --backend cuda --grid 132 --block 512
done
grep -E "Duration|Executed Instructions |Issued Warp|Eligible|Stall|Registers|DRAM Through" $O/ncu_uniform.log $O/ncu_lognormal.log | head -40
