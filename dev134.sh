#!/usr/bin/env bash
# call 134: the canonical bench and variance study on commit 1371bb7, ctest -L gpu, bfloat16 rows at 8 elements a thread
export SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=560
SCRIPT=dev134; source scripts/device-session.sh
L=$OUT/logs; B=build/cuda/sumlab
step $L/bench_canonical_134.log $(limit 230 150) $B bench --force --out $OUT/bench --sweep --no-cpu --samples 9 --log2-min 20 --dtypes float32,float64 --kernels gpu_fixed_point,gpu_exact,gpu_two_pass,gpu_last_block,gpu_kahan,gpu_double_word,gpu_cub --exact-dists uniform,normal,lognormal
step $L/variance_134.log $(limit 40 110) $B study variance --backend cuda --verify full --out $OUT/variance --force
step $L/ctest_gpu_134.log $(limit 100 15) ctest --test-dir build/cuda -L gpu --output-on-failure -j4
step $L/bench_rows_e8_134.log $(limit 30 2) $B bench --no-cpu --kernels gpu_cub --log2-min 22 --log2-max 22 --samples 9 --force --dtypes float32 --row-elements 8,16 --out $OUT/b_e8
cd $OUT && tar czf session.tar.gz logs bench variance b_e8; rm -rf logs bench variance b_e8
