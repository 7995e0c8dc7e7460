#!/usr/bin/env bash
set -uo pipefail
O=$OUT
export SUMLAB_GIT_COMMIT=$(cut -d' ' -f1 .debs/commit.txt)
T0=$SECONDS
if [ ! -x build/cuda/sumlab ]; then
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
fi
echo "setup at $((SECONDS-T0))s"
U=/tmp/sumlab-deps/usr
export CMAKE_PREFIX_PATH=$U CPATH="$U/include:$U/include/x86_64-linux-gnu:$U/include/eigen3" LIBRARY_PATH=$U/lib/x86_64-linux-gnu LD_LIBRARY_PATH=$U/lib/x86_64-linux-gnu
LEFT=$((195 - (SECONDS-T0)))
OUT=$O/b64 SUMLAB_BENCH_SECONDS=$LEFT SUMLAB_BENCH_ARGS="--no-cpu --samples 7 --log2-min 24 --log2-step 6 --kernels gpu_exact,gpu_fixed_point,gpu_cub --exact-dists lognormal:12 --dtypes float64,float32" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench at $((SECONDS-T0))s"; tail -2 $O/b64/bench.log
