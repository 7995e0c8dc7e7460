#!/usr/bin/env bash
# Session 9 run 55: `sumlab bench` with the scans, segmented sums and variance row kernels
# (bench_families.csv) on 72fa1df + the families bench (working tree): GPU tests, then the bench of
# run 53's command (the families come with it), two n = 2^30 float64 cells' memory included.
set -uo pipefail
O=$OUT/r
mkdir -p $O
export SUMLAB_GIT_COMMIT="$(cut -d' ' -f1 .debs/commit.txt) + the families bench (working tree)"
T0=$SECONDS
export PATH="$PATH:/usr/local/cuda/bin"
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
echo "setup rc=$? at $((SECONDS-T0))s"; tail -2 $O/setup-console.log
U=/tmp/sumlab-deps/usr
export LD_LIBRARY_PATH=$U/lib/x86_64-linux-gnu
hdr() { echo "# commit: $SUMLAB_GIT_COMMIT"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: $*"; }
run() { local f=$1 lim=$2; shift 2; { hdr "$@"; timeout $lim "$@"; echo "# exit $?"; } > $O/$f 2>&1; echo "$f done at $((SECONDS-T0))s"; }
pack() { (cd $OUT && tar czf $OUT/r.tgz r); }
run bench_test.log 60 build/cuda/tests/bench_test
grep -E "PASSED|FAILED|SKIPPED|Failure" $O/bench_test.log | head -5
run ctest_gpu.log 150 ctest --test-dir build/cuda -L gpu --output-on-failure -j4
grep -E "tests passed|tests failed" $O/ctest_gpu.log
run verify_quick.log 60 build/cuda/sumlab verify --quick
grep -E "^total|# exit" $O/verify_quick.log | head -5
pack
BUILD=build/cuda OUT=$O/bench SUMLAB_BENCH_SECONDS=330 SUMLAB_BENCH_ARGS="--sweep --no-cpu --samples 9 --log2-min 20 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_exact,gpu_two_pass,gpu_kahan,gpu_cub --exact-dists uniform,normal,lognormal" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench at $((SECONDS-T0))s: $(tail -1 $O/bench/bench.log)"; wc -l $O/bench/bench/*.csv
grep -c "," $O/bench/bench/bench_families.csv; awk -F, '$16 != "" && NR > 1' $O/bench/bench/bench_families.csv | head -3
pack
echo "end at $((SECONDS-T0))s"
