#!/usr/bin/env bash
# Call 122: Chan's equal-count merge without divisions and float two_pass at 32 registers (HEAD),
# its correctness, and three variants built here for a same-call comparison of the rows family.
export SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=560 SUMLAB_BUILD_TARGETS="sumlab rows_test"
SCRIPT=dev122; source scripts/device-session.sh
L=$OUT/logs; B=build/cuda/sumlab; T=build/cuda/tests
ap() { if command -v patch >/dev/null; then patch -p1 "$@"; else git apply "$@"; fi; }
rb() { cmake --build --preset cuda -j16 --target sumlab >> $L/rebuild_122.log 2>&1; echo "rebuild $? $*" >> $L/rebuild_122.log; }
BENCH="--no-cpu --kernels gpu_cub --dtypes float32,float64 --log2-min 22 --log2-max 28 --log2-step 2 --samples 9 --force"
step $L/rows_test_122.log $(limit 60 400) $T/rows_test
step $L/verify_122.log $(limit 30 380) $B verify --quick
step $L/bench_rows_122_head.log $(limit 45 330) $B bench $BENCH --out $OUT/b_head
ap < dev122/unroll.patch >> $L/rebuild_122.log 2>&1; rb unroll
step $L/bench_rows_122_unroll.log $(limit 45 250) $B bench $BENCH --out $OUT/b_unroll
ap -R < dev122/unroll.patch >> $L/rebuild_122.log 2>&1; ap < dev122/rowfor.patch >> $L/rebuild_122.log 2>&1; rb rowfor
step $L/bench_rows_122_rowfor.log $(limit 45 170) $B bench $BENCH --out $OUT/b_rowfor
ap -R < dev122/rowfor.patch >> $L/rebuild_122.log 2>&1; ap -R < dev122/base.patch >> $L/rebuild_122.log 2>&1; rb base
step $L/bench_rows_122_base.log $(limit 45 90) $B bench $BENCH --out $OUT/b_base
for v in head unroll rowfor base; do [ -f $OUT/b_$v/bench_families.csv ] && gzip -c $OUT/b_$v/bench_families.csv > $L/bench_rows_122_$v.csv.gz; done
cd $OUT && tar czf session.tar.gz logs; rm -rf logs b_*
