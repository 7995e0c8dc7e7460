#!/usr/bin/env bash
# Session 8 run 49: gpu_exact's range slots over every lane of the warp (live_mask, not
# __activemask): the fix on main (0082b78) checked and timed against main (7647c6d); and run 47's
# tail-launch variant with the fix (built in /tmp/t), to see whether run 47's one-block mismatches
# were this.
set -uo pipefail
O=$OUT/r
mkdir -p $O
export SUMLAB_GIT_COMMIT=$(cut -d' ' -f1 .debs/commit.txt)
T0=$SECONDS
export PATH="$PATH:/usr/local/cuda/bin"
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
echo "setup rc=$? at $((SECONDS-T0))s"
U=/tmp/sumlab-deps/usr
export CMAKE_PREFIX_PATH=$U CPATH="$U/include:$U/include/x86_64-linux-gnu:$U/include/eigen3" LIBRARY_PATH=$U/lib/x86_64-linux-gnu LD_LIBRARY_PATH=$U/lib/x86_64-linux-gnu
( mkdir -p /tmp/t && tar xzf .debs/tailfix.tar.gz -C /tmp/t && cd /tmp/t && cmake --preset cuda -DSUMLAB_BENCH=OFF > $O/tail-build.log 2>&1 && cmake --build --preset cuda -j8 --target sumlab gpu_sum_test >> $O/tail-build.log 2>&1; echo "tail build rc=$?" >> $O/tail-build.log ) &
TB=$!
( mkdir -p /tmp/m && tar xzf .debs/main.tar.gz -C /tmp/m && cd /tmp/m && cmake --preset cuda -DSUMLAB_BENCH=OFF > $O/main-build.log 2>&1 && cmake --build --preset cuda -j8 --target sumlab >> $O/main-build.log 2>&1; echo "main build rc=$?" >> $O/main-build.log ) &
MB=$!
hdr() { echo "# commit: $SUMLAB_GIT_COMMIT"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: $*"; }
left() { local want=$(( $1 / 2 )); if (( SECONDS - T0 + want > 570 )); then echo "skipped (time) at $((SECONDS-T0))s"; return 1; fi; }
run() { local f=$1 lim=$2; shift 2; left $lim || return 0; { hdr "$@"; timeout $lim "$@"; echo "# exit $?"; } > $O/$f 2>&1; echo "$f done at $((SECONDS-T0))s"; }
pack() { (cd $OUT && tar czf $OUT/r.tgz r); }
bench() { local name=$1 lim=$2 build=$3 args=$4; left $lim || return 0; BUILD=$build OUT=$O/$name SUMLAB_BENCH_SECONDS=$lim SUMLAB_BENCH_ARGS="$args" bash scripts/device-bench.sh > /dev/null 2>&1; echo "$name at $((SECONDS-T0))s: $(tail -1 $O/$name/bench.log) repeated-launch errors: $(grep -c 'repeated launches' $O/$name/bench/bench_gpu.csv)"; pack; }
run gpu_tests.log 90 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*:GpuFixedPoint*:GpuExact*'
grep -E "PASSED|FAILED|# exit" $O/gpu_tests.log | tail -3
run ctest_gpu.log 150 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed" $O/ctest_gpu.log
run verify_quick.log 60 build/cuda/sumlab verify --quick
grep -E "gpu_exact|gpu_fixed|^total|# exit" $O/verify_quick.log | head -4
pack
wait $TB; tail -1 $O/tail-build.log
SUMLAB_GIT_COMMIT="tail launch + fix (/tmp/t)" run tail_gpu_tests.log 60 /tmp/t/build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*:GpuFixedPoint*:GpuExact*'
grep -E "PASSED|FAILED|# exit" $O/tail_gpu_tests.log | tail -3
SUMLAB_GIT_COMMIT="tail launch + fix (/tmp/t)" run tail_verify_quick.log 60 /tmp/t/build/cuda/sumlab verify --quick
grep -E "gpu_exact|gpu_fixed|^total|MISMATCH|# exit" $O/tail_verify_quick.log | head -6
pack
wait $MB; tail -1 $O/main-build.log
A="--sweep --no-cpu --samples 7 --log2-min 24 --log2-max 28 --log2-step 2 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_exact,gpu_cub --exact-dists uniform"
bench new_ab 70 build/cuda "$A"
SUMLAB_GIT_COMMIT=7647c6d bench main_ab 70 /tmp/m/build/cuda "$A"
for i in 1 2; do bench stress$i 40 build/cuda "--sweep --no-cpu --samples 3 --log2-min 24 --log2-max 26 --log2-step 1 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_exact"; done
run memcheck.log 90 compute-sanitizer --tool memcheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuFixedPoint*:GpuExactAndFixedPoint*'
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/memcheck.log | tail -3
run racecheck.log 60 compute-sanitizer --tool racecheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuExactAndFixedPoint*'
grep -E "RACECHECK SUMMARY|PASSED|FAILED|# exit" $O/racecheck.log | tail -3
pack
echo "end at $((SECONDS-T0))s"
