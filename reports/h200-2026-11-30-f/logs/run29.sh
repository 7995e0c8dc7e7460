#!/usr/bin/env bash
# Session 6 run 29: is run 27's launch-to-launch change of run 27's loader (G: whole rounds, then
# one 64-byte group per thread from global memory) a missing proxy fence before a refill? G, G with
# fence.proxy.async before each refill, main's loader with that fence (Bf) and main's loader (B),
# each under repeated-launch stresses of the fixed-point sums over every sweep shape; Bf and B timed.
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
PERF="--sweep --no-cpu --samples 9 --log2-min 24 --dtypes float32 --kernels gpu_fixed_point,gpu_exact,gpu_cub --exact-dists uniform"
cp gpu/thread/bulk_loads.cuh /tmp/B.cuh
for v in G G_fence B_fence; do
  cp .debs/bulk_$v.cuh gpu/thread/bulk_loads.cuh
  for i in 1 2 3; do bench ${v}_stress$i 40 "$STRESS"; done
done
bench B_fence_perf 60 "$PERF"
cp /tmp/B.cuh gpu/thread/bulk_loads.cuh
bench B_perf 60 "$PERF"
for i in 1 2 3; do bench B_stress$i 40 "$STRESS"; done
echo "end at $((SECONDS-T0))s"
