#!/usr/bin/env bash
export SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=570 SUMLAB_BUILD_TARGETS="sumlab gpu_sum_test rows_test"
SCRIPT=dev49
source scripts/device-session.sh
L=$OUT/logs; B=build/cuda/sumlab; T=build/cuda/tests
step $L/rows_test_49.log $(limit 60 420) $T/rows_test
step $L/fixed_test_49.log $(limit 60 380) $T/gpu_sum_test --gtest_filter='GpuFixedPoint*'
step $L/bench_49.log $(limit 150 250) $B bench --no-cpu --kernels gpu_fixed_point --log2-min 22 --log2-max 30 --log2-step 2 \
  --samples 5 --dists uniform,normal,lognormal --dtypes float32,float64 --out $OUT/bench49
step $L/verify_fixed_49.log $(limit 90 150) $B verify --kernels gpu_fixed_point --csv $OUT/verify49.csv
step $L/racecheck_fixed_49.log $(limit 60 80) compute-sanitizer --tool racecheck --error-exitcode 9 $T/gpu_sum_test --gtest_filter='GpuFixedPointFromData/1*'
step $L/memcheck_rows_49.log $(limit 70 10) compute-sanitizer --tool memcheck --error-exitcode 9 $T/rows_test --gtest_filter='Rows.GpuBitsEqualModelBitsFloat32:Rows.GpuBitsEqualModelBitsBfloat16'
cd $OUT && cp bench49/*.csv logs/ 2>/dev/null; tar czf session.tar.gz logs
