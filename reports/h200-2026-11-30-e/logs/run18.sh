#!/usr/bin/env bash
# Session 5 run 18: on one machine, the loads experiment beside sumlab bench of the given-k and exact
# paths (float32, uniform), then Nsight Compute (clocks not locked) of fixed_point_kernel, the exact
# kernel and CUB at 2^24 and 2^28: where the time of the small sizes goes.
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
E=reports/h200-2026-11-30-e/experiments
nvcc -O3 -std=c++17 -arch=sm_90 --fmad=false -o /tmp/loads $E/loads.cu > $O/loads_build.log 2>&1
run loads.log 120 /tmp/loads
OUT=$O/bench SUMLAB_BENCH_SECONDS=100 SUMLAB_BENCH_ARGS="--sweep --no-cpu --samples 9 --log2-min 24 --dtypes float32 --kernels gpu_fixed_point,gpu_exact,gpu_cub --exact-dists uniform" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench at $((SECONDS-T0))s"; tail -1 $O/bench/bench.log
pack
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
run ncu_given_k_24.log 60 ncu --clock-control none --kernel-name regex:fixed_point_kernel --launch-skip 2 --launch-count 1 $S build/cuda/sumlab sum --dist uniform -n 16777216 --dtype float32 -a gpu_fixed_point,gpu_fixed_point,gpu_fixed_point --backend cuda --fixed-scale 62 --grid 132 --block 512
run ncu_exact_24.log 60 ncu --clock-control none --kernel-name regex:exact_limbs --launch-skip 2 --launch-count 1 $S build/cuda/sumlab sum --dist uniform -n 16777216 --dtype float32 -a gpu_exact,gpu_exact,gpu_exact --backend cuda --grid 132 --block 512
run ncu_cub_24.log 60 ncu --clock-control none --kernel-name regex:DeviceReduce --launch-skip 4 --launch-count 2 $S build/cuda/sumlab sum --dist uniform -n 16777216 --dtype float32 -a gpu_cub,gpu_cub,gpu_cub --backend cuda
run ncu_given_k_28.log 100 ncu --clock-control none --kernel-name regex:fixed_point_kernel --launch-skip 2 --launch-count 1 $S build/cuda/sumlab sum --dist uniform -n 268435456 --dtype float32 -a gpu_fixed_point,gpu_fixed_point,gpu_fixed_point --backend cuda --fixed-scale 62 --grid 264 --block 512
pack
