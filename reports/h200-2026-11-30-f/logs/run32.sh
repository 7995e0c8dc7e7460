#!/usr/bin/env bash
# Session 6 run 32: main's kernels and CUB from 2^20 to 2^26 elements, step 2^1 (float32), to split
# the 2^24 gap into a per-launch cost and a bandwidth term (a line through each kernel's times).
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
OUT=$O/bench SUMLAB_BENCH_SECONDS=100 SUMLAB_BENCH_ARGS="--sweep --no-cpu --samples 9 --log2-min 20 --log2-max 26 --log2-step 1 --dtypes float32 --kernels gpu_fixed_point,gpu_exact,gpu_two_pass,gpu_kahan,gpu_cub --exact-dists uniform" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench at $((SECONDS-T0))s: $(tail -1 $O/bench/bench.log) repeated-launch errors: $(grep -c 'repeated launches' $O/bench/bench/bench_gpu.csv)"
(cd $OUT && tar czf $OUT/r.tgz r)
