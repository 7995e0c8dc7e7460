#!/usr/bin/env bash
# Session 6 run 31: smaller tiles for the bulk loads at 2^24: a thread's share of a tile 64 bytes
# (main, M), 32 bytes with twice the stages (g32), 16 bytes with four times (g16), the same shared
# memory; each variant's bulk tests and a repeated-launch stress, then the bench of all three.
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
pack() { (cd $OUT && tar czf $OUT/r.tgz r); }
bench() { local name=$1 lim=$2 args=$3; if (( SECONDS - T0 + lim / 2 > 570 )); then echo "$name skipped"; return 0; fi; OUT=$O/$name SUMLAB_BENCH_SECONDS=$lim SUMLAB_BENCH_ARGS="$args" bash scripts/device-bench.sh > /dev/null 2>&1; echo "$name at $((SECONDS-T0))s: $(tail -1 $O/$name/bench.log) repeated-launch errors: $(grep -c 'repeated launches' $O/$name/bench/bench_gpu.csv)"; pack; }
STRESS="--sweep --no-cpu --samples 3 --log2-min 24 --log2-max 26 --log2-step 1 --dtypes float32,float64 --kernels gpu_fixed_point"
PERF="--sweep --no-cpu --samples 9 --log2-min 24 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_exact,gpu_cub --exact-dists uniform"
cp gpu/thread/bulk_loads.cuh /tmp/M.cuh
bench M_perf 60 "$PERF"
for v in g32 g16; do
  cp .debs/bulk_$v.cuh gpu/thread/bulk_loads.cuh
  cmake --build build/cuda --target sumlab gpu_sum_test > $O/build_$v.log 2>&1 || { echo "build $v failed"; tail -20 $O/build_$v.log; continue; }
  timeout 60 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*:GpuFixedPointGivenScale*:GpuExact*' > $O/bulk_tests_$v.log 2>&1; echo "$v tests rc=$? at $((SECONDS-T0))s: $(grep -E 'PASSED|FAILED' $O/bulk_tests_$v.log | tail -2 | tr '\n' ' ')"
  bench ${v}_stress 40 "$STRESS"
  bench ${v}_perf 60 "$PERF"
done
cp /tmp/M.cuh gpu/thread/bulk_loads.cuh
echo "end at $((SECONDS-T0))s"
