#!/usr/bin/env bash
# Session 8 run 43: the bulk loader without a block barrier per tile (the last warp to read a stage
# refills it) and warp 0 adding the fixed-point kernel's warp totals, against main (0ec2df1): the
# launch-cost experiment built against both, GPU tests, bench A/B in one call, stress, sanitizers.
set -uo pipefail
O=$OUT/r
mkdir -p $O
export SUMLAB_GIT_COMMIT=$(cut -d' ' -f1 .debs/commit.txt)
T0=$SECONDS
export PATH="$PATH:/usr/local/cuda/bin"
X=reports/h200-2026-11-30-g/experiments
( nvcc -O3 -std=c++20 -arch=sm_90 --fmad=false -I. $X/launch_cost.cu -o /tmp/lc_new > $O/lc_build.log 2>&1 && nvcc -O3 -std=c++20 -arch=sm_90 --fmad=false -I.debs/ab -I. $X/launch_cost.cu -o /tmp/lc_main >> $O/lc_build.log 2>&1; echo "rc=$?" >> $O/lc_build.log ) &
XB=$!
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
echo "setup rc=$? at $((SECONDS-T0))s"; tail -1 $O/setup-console.log
U=/tmp/sumlab-deps/usr
export CMAKE_PREFIX_PATH=$U CPATH="$U/include:$U/include/x86_64-linux-gnu:$U/include/eigen3" LIBRARY_PATH=$U/lib/x86_64-linux-gnu LD_LIBRARY_PATH=$U/lib/x86_64-linux-gnu
( mkdir -p /tmp/m && tar xzf .debs/main.tar.gz -C /tmp/m && cd /tmp/m && SUMLAB_GIT_COMMIT=0ec2df1 cmake --preset cuda -DSUMLAB_BENCH=OFF > $O/main-build.log 2>&1 && SUMLAB_GIT_COMMIT=0ec2df1 cmake --build --preset cuda -j8 --target sumlab >> $O/main-build.log 2>&1; echo "main build rc=$?" >> $O/main-build.log ) &
MB=$!
hdr() { echo "# commit: $SUMLAB_GIT_COMMIT"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: $*"; }
left() { local want=$(( $1 / 2 )); if (( SECONDS - T0 + want > 570 )); then echo "skipped (time) at $((SECONDS-T0))s"; return 1; fi; }
run() { local f=$1 lim=$2; shift 2; left $lim || return 0; { hdr "$@"; timeout $lim "$@"; echo "# exit $?"; } > $O/$f 2>&1; echo "$f done at $((SECONDS-T0))s"; }
pack() { (cd $OUT && tar czf $OUT/r.tgz r); }
bench() { local name=$1 lim=$2 build=$3 args=$4; left $lim || return 0; BUILD=$build OUT=$O/$name SUMLAB_BENCH_SECONDS=$lim SUMLAB_BENCH_ARGS="$args" bash scripts/device-bench.sh > /dev/null 2>&1; echo "$name at $((SECONDS-T0))s: $(tail -1 $O/$name/bench.log) repeated-launch errors: $(grep -c 'repeated launches' $O/$name/bench/bench_gpu.csv)"; pack; }
wait $XB; tail -1 $O/lc_build.log
run lc_main.log 60 /tmp/lc_main
run lc_new.log 60 /tmp/lc_new
paste <(grep -E "fixed|exact|tiles |cub" $O/lc_main.log) <(grep -E "fixed|exact|tiles |cub" $O/lc_new.log | awk '{print $(NF-3), $NF}')
pack
run gpu_tests.log 90 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*:GpuFixedPoint*:GpuExact*'
grep -E "PASSED|FAILED|# exit" $O/gpu_tests.log | tail -3
wait $MB; tail -1 $O/main-build.log
A="--sweep --no-cpu --samples 9 --log2-min 24 --log2-max 28 --log2-step 4 --dtypes float32 --kernels gpu_fixed_point,gpu_exact,gpu_cub --exact-dists uniform,normal"
bench new_ab 60 build/cuda "$A"
SUMLAB_GIT_COMMIT=0ec2df1 bench main_ab 60 /tmp/m/build/cuda "$A"
for i in 1 2; do bench stress$i 40 build/cuda "--sweep --no-cpu --samples 3 --log2-min 24 --log2-max 26 --log2-step 1 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_exact"; done
run racecheck.log 60 compute-sanitizer --tool racecheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*:GpuFixedPointGivenScale/0*'
grep -E "RACECHECK SUMMARY|PASSED|FAILED|# exit" $O/racecheck.log | tail -3
run synccheck.log 60 compute-sanitizer --tool synccheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*:GpuFixedPointGivenScale/0*'
grep -E "ERROR SUMMARY|PASSED|FAILED|# exit" $O/synccheck.log | tail -3
pack
echo "end at $((SECONDS-T0))s"
