#!/usr/bin/env bash
# Session 7 run 42: the bench's launch count from a second single sum: ctest -L gpu (the bench's
# own tests included) and a 2^24 sweep whose launch counts show whether the first-launch cells are gone.
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
{ echo "# commit: $SUMLAB_GIT_COMMIT"; echo "# command: ctest --test-dir build/cuda -L gpu --output-on-failure -j4"; timeout 150 ctest --test-dir build/cuda -L gpu --output-on-failure -j4; echo "# exit $?"; } > $O/ctest_gpu.log 2>&1
grep -E "tests passed|tests failed" $O/ctest_gpu.log
OUT=$O/bench SUMLAB_BENCH_SECONDS=60 SUMLAB_BENCH_ARGS="--sweep --no-cpu --samples 9 --log2-min 24 --log2-max 24 --dtypes float32 --kernels gpu_fixed_point,gpu_exact,gpu_two_pass,gpu_cub --exact-dists uniform" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench at $((SECONDS-T0))s: $(tail -1 $O/bench/bench.log) repeated-launch errors: $(grep -c 'repeated launches' $O/bench/bench/bench_gpu.csv)"
python3 - "$O/bench/bench/bench_gpu.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r['launches']]
print('cells', len(rows), 'launches min', min(int(r['launches']) for r in rows), 'max', max(int(r['launches']) for r in rows))
for r in rows:
    if int(r['launches']) < 60: print('  few:', r['kernel'], r['shape'][:9], r['launches'], r['ms'])
PY
(cd $OUT && tar czf $OUT/r.tgz r)
echo "end at $((SECONDS-T0))s"
