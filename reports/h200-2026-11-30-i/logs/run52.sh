#!/usr/bin/env bash
# Session 9 run 52: gpu_fixed_point's pass 2 as pass 1's programmatic dependent for float32 (the
# working tree) against main (71a39bf): GPU tests, ctest -L gpu, verify, bench A/B 2^20 - 2^28 in
# one call, lognormal sigma 12 (float off the grid: pass 2 quantises), memcheck, racecheck, synccheck.
set -uo pipefail
O=$OUT/r
mkdir -p $O
export SUMLAB_GIT_COMMIT="$(cut -d' ' -f1 .debs/commit.txt) + pass 2 as a programmatic dependent (working tree)"
T0=$SECONDS
export PATH="$PATH:/usr/local/cuda/bin"
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
echo "setup rc=$? at $((SECONDS-T0))s"; tail -3 $O/setup-console.log
U=/tmp/sumlab-deps/usr
export CMAKE_PREFIX_PATH=$U CPATH="$U/include:$U/include/x86_64-linux-gnu:$U/include/eigen3" LIBRARY_PATH=$U/lib/x86_64-linux-gnu LD_LIBRARY_PATH=$U/lib/x86_64-linux-gnu
( mkdir -p /tmp/m && tar xzf .debs/main.tar.gz -C /tmp/m && cd /tmp/m && SUMLAB_GIT_COMMIT=71a39bf cmake --preset cuda -DSUMLAB_BENCH=OFF > $O/main-build.log 2>&1 && SUMLAB_GIT_COMMIT=71a39bf cmake --build --preset cuda -j8 --target sumlab >> $O/main-build.log 2>&1; echo "main build rc=$?" >> $O/main-build.log ) &
MB=$!
hdr() { echo "# commit: $SUMLAB_GIT_COMMIT"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: $*"; }
left() { local want=$(( $1 / 2 )); if (( SECONDS - T0 + want > 575 )); then echo "skipped (time) at $((SECONDS-T0))s"; return 1; fi; }
run() { local f=$1 lim=$2; shift 2; left $lim || return 0; { hdr "$@"; timeout $lim "$@"; echo "# exit $?"; } > $O/$f 2>&1; echo "$f done at $((SECONDS-T0))s"; }
pack() { (cd $OUT && tar czf $OUT/r.tgz r); }
bench() { local name=$1 lim=$2 build=$3 args=$4; left $lim || return 0; BUILD=$build OUT=$O/$name SUMLAB_BENCH_SECONDS=$lim SUMLAB_BENCH_ARGS="$args" bash scripts/device-bench.sh > /dev/null 2>&1; echo "$name at $((SECONDS-T0))s: $(tail -1 $O/$name/bench.log) repeated-launch errors: $(grep -c 'repeated launches' $O/$name/bench/bench_gpu.csv)"; pack; }
run gpu_tests.log 90 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*:GpuFixedPoint*:GpuExact*'
grep -E "PASSED|FAILED|# exit" $O/gpu_tests.log | tail -3
run ctest_gpu.log 150 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed" $O/ctest_gpu.log
run verify_quick.log 60 build/cuda/sumlab verify --quick
grep -E "gpu_exact|gpu_fixed|^total|# exit" $O/verify_quick.log | head -6
pack
wait $MB; tail -1 $O/main-build.log
A="--sweep --no-cpu --samples 7 --log2-min 20 --log2-max 28 --log2-step 2 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_exact,gpu_cub --exact-dists uniform"
bench new_ab 80 build/cuda "$A"
SUMLAB_GIT_COMMIT=71a39bf bench main_ab 80 /tmp/m/build/cuda "$A"
R="--sweep --no-cpu --samples 5 --log2-min 22 --log2-max 26 --log2-step 2 --dtypes float32 --kernels gpu_fixed_point,gpu_cub --dists lognormal:12"
bench new_range 35 build/cuda "$R"
SUMLAB_GIT_COMMIT=71a39bf bench main_range 35 /tmp/m/build/cuda "$R"
run memcheck.log 80 compute-sanitizer --tool memcheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuFixedPoint*:GpuExactAndFixedPoint*'
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/memcheck.log | tail -3
run racecheck.log 60 compute-sanitizer --tool racecheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuExactAndFixedPoint*'
grep -E "RACECHECK SUMMARY|PASSED|FAILED|# exit" $O/racecheck.log | tail -3
run synccheck.log 50 compute-sanitizer --tool synccheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuExactAndFixedPoint*'
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/synccheck.log | tail -3
pack
echo "end at $((SECONDS-T0))s"
