#!/usr/bin/env bash
# Session 7 run 34: where the bulk kernels' remaining per-launch cost goes
# (reports/h200-2026-11-30-g/experiments/launch_cost.cu: timings and a per-block timeline), main's
# kernels at 2^28, and the racecheck run 33 ran out of time for.
set -uo pipefail
O=$OUT/r
mkdir -p $O
export SUMLAB_GIT_COMMIT=$(cut -d' ' -f1 .debs/commit.txt)
T0=$SECONDS
export PATH="$PATH:/usr/local/cuda/bin"
hdr() { echo "# commit: $SUMLAB_GIT_COMMIT"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: $*"; }
pack() { (cd $OUT && tar czf $OUT/r.tgz r); }
X=reports/h200-2026-11-30-g/experiments
( nvcc -O3 -std=c++20 -arch=sm_90 --fmad=false -I. $X/launch_cost.cu -o /tmp/launch_cost > $O/launch_cost_build.log 2>&1; echo "rc=$?" >> $O/launch_cost_build.log ) &
XB=$!
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
echo "setup rc=$? at $((SECONDS-T0))s"; tail -1 $O/setup-console.log
wait $XB; tail -1 $O/launch_cost_build.log
{ hdr /tmp/launch_cost; timeout 120 /tmp/launch_cost; echo "# exit $?"; } > $O/launch_cost.log 2>&1
{ hdr /tmp/launch_cost timeline; timeout 60 /tmp/launch_cost timeline; echo "# exit $?"; } > $O/launch_cost_timeline.log 2>&1
echo "experiment at $((SECONDS-T0))s"; cat $O/launch_cost.log | head -60; pack
U=/tmp/sumlab-deps/usr
export CMAKE_PREFIX_PATH=$U CPATH="$U/include:$U/include/x86_64-linux-gnu:$U/include/eigen3" LIBRARY_PATH=$U/lib/x86_64-linux-gnu LD_LIBRARY_PATH=$U/lib/x86_64-linux-gnu
OUT=$O/bench28 SUMLAB_BENCH_SECONDS=90 SUMLAB_BENCH_ARGS="--sweep --no-cpu --samples 9 --log2-min 28 --log2-max 28 --dtypes float32 --kernels gpu_fixed_point,gpu_exact,gpu_two_pass,gpu_kahan,gpu_cub --exact-dists uniform,normal" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench28 at $((SECONDS-T0))s: $(tail -1 $O/bench28/bench.log) repeated-launch errors: $(grep -c 'repeated launches' $O/bench28/bench/bench_gpu.csv)"; pack
{ hdr racecheck; timeout 200 compute-sanitizer --tool racecheck --error-exitcode 99 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuFixedPointGivenScale/0*'; echo "# exit $?"; } > $O/racecheck.log 2>&1
grep -E "RACECHECK SUMMARY|PASSED|FAILED|# exit" $O/racecheck.log | tail -3
pack
cat $O/launch_cost_timeline.log | head -80
echo "end at $((SECONDS-T0))s"
