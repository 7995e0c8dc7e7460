#!/usr/bin/env bash
# Session 6 run 27: whole rounds of tiles, the rest as at most one 64-byte group per thread from global memory (G)
# against whole tiles only, round-robin (B: c7026dc's bulk_loads.cuh), then G again (noise).
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
run bulk_tests.log 90 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads*:GpuFixedPointGivenScale*:GpuExact*'
grep -E "PASSED|FAILED|# exit" $O/bulk_tests.log | tail -3
pack
B="--sweep --no-cpu --samples 9 --log2-min 24 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_exact,gpu_cub --exact-dists uniform"
bench() { OUT=$O/bench_$1 SUMLAB_BENCH_SECONDS=90 SUMLAB_BENCH_ARGS="$B" bash scripts/device-bench.sh > /dev/null 2>&1; echo "bench $1 at $((SECONDS-T0))s"; tail -1 $O/bench_$1/bench.log; pack; }
bench G
cp gpu/thread/bulk_loads.cuh /tmp/G.cuh
cp .debs/bulk_loads_rr.cuh gpu/thread/bulk_loads.cuh
bench B
cp /tmp/G.cuh gpu/thread/bulk_loads.cuh
bench G2
echo "end at $((SECONDS-T0))s"
