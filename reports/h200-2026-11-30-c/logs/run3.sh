#!/usr/bin/env bash
# Session run 3: the bench (float32, every kernel, sweep, exact range study), and ncu on the lognormal imbalance.
set -uo pipefail
O=$OUT
export SUMLAB_GIT_COMMIT=$(cut -d' ' -f1 .debs/commit.txt)
T0=$SECONDS
if [ ! -x build/cuda/sumlab ]; then
  OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
  echo "setup rc=$? at $((SECONDS-T0))s"
fi
U=/tmp/sumlab-deps/usr
export CMAKE_PREFIX_PATH=$U CPATH="$U/include:$U/include/x86_64-linux-gnu:$U/include/eigen3" LIBRARY_PATH=$U/lib/x86_64-linux-gnu LD_LIBRARY_PATH=$U/lib/x86_64-linux-gnu
export PATH="$PATH:/usr/local/cuda/bin"
for d in uniform lognormal; do
  timeout 40 ncu --kernel-name regex:exact_limbs --launch-count 1 --metrics sm__cycles_active.max,sm__cycles_active.min,sm__cycles_active.avg,smsp__inst_executed.max,smsp__inst_executed.min,smsp__inst_executed.avg,gpu__time_duration.sum build/cuda/sumlab sum --dist $d -n 16777216 -a gpu_exact --backend cuda --grid 132 --block 512 > $O/ncu_balance_$d.log 2>&1
done
grep -E "sm__|smsp__|gpu__" $O/ncu_balance_*.log
echo "ncu at $((SECONDS-T0))s"
LEFT=$((580 - (SECONDS-T0)))
OUT=$O/bench32 SUMLAB_BENCH_SECONDS=$LEFT SUMLAB_BENCH_ARGS="--sweep --no-cpu --samples 9 --dtypes float32" bash scripts/device-bench.sh > /dev/null 2>&1
echo "bench at $((SECONDS-T0))s"; tail -3 $O/bench32/bench.log
