#!/usr/bin/env bash
export SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=570 SUMLAB_BUILD_TARGETS="sumlab rows_test gpu_scan_test"
SCRIPT=dev50
source scripts/device-session.sh
L=$OUT/logs; B=build/cuda/sumlab; T=build/cuda/tests
step $L/rows_test_50.log $(limit 60 420) $T/rows_test
step $L/scan_test_50.log $(limit 60 380) $T/gpu_scan_test
step $L/scan_shapes_50.log $(limit 90 300) $B study scan --backend cuda --algorithms warp_hs_chained,cub --ops plus \
  --dtypes float32,float64 --sizes 1000 --recurrence-sizes 4096 --time-n 2^26 --reps 5 --out $OUT/scan-shapes
step $L/bench_families_50.log $(limit 120 180) $B bench --no-cpu --kernels gpu_two_pass --log2-min 22 --log2-max 30 --log2-step 2 \
  --samples 5 --dists uniform --dtypes float32,float64 --out $OUT/bench50
step $L/verify_families_50.log $(limit 60 110) $B verify --kernels gpu_two_pass --sizes 0,1,1000 --dists uniform
step $L/memcheck_rows_50.log $(limit 90 15) compute-sanitizer --tool memcheck --error-exitcode 9 $T/rows_test --gtest_filter='Rows.GpuBitsEqualModelBitsFloat32:Rows.GpuBitsEqualModelBitsBfloat16'
cd $OUT && cp bench50/bench_families.csv logs/bench_families_50.csv 2>/dev/null; cp scan-shapes/*throughput*.csv logs/scan_shapes_50_throughput.csv 2>/dev/null; ls scan-shapes > logs/scan_shapes_files.txt 2>&1; tar czf session.tar.gz logs
