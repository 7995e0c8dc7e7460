#!/usr/bin/env bash
# Session 4 run 11: rebuild, gpu tests, verify --quick, memcheck over the fixed-point tests, the
# float32 bench of the fixed-point paths, Nsight Compute of the given-k kernel, the float64 and
# lognormal:12 benches; everything tarred into one file (the tool brings back 8 files at most).
set -uo pipefail
O=$OUT/r
mkdir -p $O
export SUMLAB_GIT_COMMIT=$(cut -d' ' -f1 .debs/commit.txt)
T0=$SECONDS
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
echo "setup rc=$? at $((SECONDS-T0))s"; tail -2 $O/setup-console.log
U=/tmp/sumlab-deps/usr
export CMAKE_PREFIX_PATH=$U CPATH="$U/include:$U/include/x86_64-linux-gnu:$U/include/eigen3" LIBRARY_PATH=$U/lib/x86_64-linux-gnu LD_LIBRARY_PATH=$U/lib/x86_64-linux-gnu
export PATH="$PATH:/usr/local/cuda/bin"
hdr() { echo "# commit: $SUMLAB_GIT_COMMIT"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: $*"; }
run() { local f=$1 lim=$2; shift 2; { hdr "$@"; timeout $lim "$@"; echo "# exit $?"; } > $O/$f 2>&1; echo "$f done at $((SECONDS-T0))s"; }
pack() { (cd $OUT && tar czf $OUT/r.tgz r); }
run ctest_gpu.log 170 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed|Failed|\*\*\*|Failure|Expected|Which is" $O/ctest_gpu.log | head -20
run verify_quick.log 90 build/cuda/sumlab verify --quick
grep -E "^sumlab|# exit" $O/verify_quick.log | tail -2
run memcheck_fixed.log 100 compute-sanitizer --tool memcheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuFixedPointGivenScale*:GpuExact.WideRanges*'
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/memcheck_fixed.log | tail -3
pack
OUT=$O/bfixed SUMLAB_BENCH_SECONDS=120 SUMLAB_BENCH_ARGS="--sweep --no-cpu --samples 9 --log2-min 24 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_exact,gpu_two_pass,gpu_kahan,gpu_cub --exact-dists uniform" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench fp32 at $((SECONDS-T0))s"; tail -2 $O/bfixed/bench.log
pack
run racecheck_fixed.log 90 compute-sanitizer --tool racecheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuFixedPointGivenScale/0*'
grep -E "RACECHECK SUMMARY|PASSED|FAILED|# exit" $O/racecheck_fixed.log | tail -3
pack
run ncu_given_k.log 60 ncu --kernel-name regex:fixed_point_kernel --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats --section Occupancy build/cuda/sumlab sum --dist uniform -n 67108864 --dtype float32 -a gpu_fixed_point --backend cuda --fixed-scale 62 --grid 264 --block 512
pack
