#!/usr/bin/env bash
# Call 123: the rows' loop change (commit 2c27079) with Chan's division-free equal merges: bits
# (rows_test, the full verify), the rows family; and a variant that stages float online-softmax rows.
export SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=560 SUMLAB_BUILD_TARGETS="sumlab rows_test"
SCRIPT=dev123; source scripts/device-session.sh
L=$OUT/logs; B=build/cuda/sumlab; T=build/cuda/tests
ap() { if command -v patch >/dev/null; then patch -p1 "$@"; else git apply "$@"; fi; }
BENCH="--no-cpu --kernels gpu_cub --log2-min 22 --log2-max 28 --log2-step 2 --samples 9 --force"
step $L/rows_test_123.log $(limit 60 420) $T/rows_test
step $L/bench_rows_123.log $(limit 45 380) $B bench $BENCH --dtypes float32,float64 --out $OUT/b_head
step $L/verify_full_123.log $(limit 200 110) $B verify
ap < dev123/stage_softmax.patch > $L/rebuild_123.log 2>&1
cmake --build --preset cuda -j16 --target sumlab >> $L/rebuild_123.log 2>&1; echo "rebuild $?" >> $L/rebuild_123.log
step $L/bench_rows_123_stage_softmax.log $(limit 45 20) $B bench $BENCH --dtypes float32 --out $OUT/b_stage
[ -f $OUT/b_head/bench_families.csv ] && gzip -c $OUT/b_head/bench_families.csv > $L/bench_rows_123.csv.gz
[ -f $OUT/b_stage/bench_families.csv ] && gzip -c $OUT/b_stage/bench_families.csv > $L/bench_rows_123_stage_softmax.csv.gz
cd $OUT && tar czf session.tar.gz logs; rm -rf logs b_*
