#!/usr/bin/env bash
# Session 9 run 53: the bench of every sum kernel the issue names on main (6269b01), 2^20 - 2^30,
# float32 and float64, and two stresses (repeated launches give the warm-up's bits).
set -uo pipefail
O=$OUT/r
mkdir -p $O
export SUMLAB_GIT_COMMIT=$(cut -d' ' -f1 .debs/commit.txt)
T0=$SECONDS
export PATH="$PATH:/usr/local/cuda/bin"
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
echo "setup rc=$? at $((SECONDS-T0))s"; tail -2 $O/setup-console.log
left() { local want=$(( $1 / 2 )); if (( SECONDS - T0 + want > 575 )); then echo "skipped (time) at $((SECONDS-T0))s"; return 1; fi; }
pack() { (cd $OUT && tar czf $OUT/r.tgz r); }
bench() { local name=$1 lim=$2 build=$3 args=$4; left $lim || return 0; BUILD=$build OUT=$O/$name SUMLAB_BENCH_SECONDS=$lim SUMLAB_BENCH_ARGS="$args" bash scripts/device-bench.sh > /dev/null 2>&1; echo "$name at $((SECONDS-T0))s: $(tail -1 $O/$name/bench.log) repeated-launch errors: $(grep -c 'repeated launches' $O/$name/bench/bench_gpu.csv)"; pack; }
bench bench 330 build/cuda "--sweep --no-cpu --samples 9 --log2-min 20 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_exact,gpu_two_pass,gpu_kahan,gpu_cub --exact-dists uniform,normal,lognormal"
for i in 1 2; do bench stress$i 40 build/cuda "--sweep --no-cpu --samples 3 --log2-min 20 --log2-max 24 --log2-step 1 --dtypes float32,float64 --kernels gpu_fixed_point"; done
pack
echo "end at $((SECONDS-T0))s"
