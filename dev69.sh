export SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=560 SUMLAB_BUILD_TARGETS="sumlab gpu_sum_test rows_test"
SCRIPT=dev69; source scripts/device-session.sh
L=$OUT/logs; B=build/cuda/sumlab; T=build/cuda/tests
step $L/rows_test_69.log $(limit 60 330) $T/rows_test
step $L/exact_test_69.log $(limit 60 280) $T/gpu_sum_test --gtest_filter='GpuExact*:GpuVsModel*:GpuFixedPoint*:GpuBulkLoads*:GpuExactAndFixedPoint*'
step $L/bench_families_69.log $(limit 90 180) $B bench --no-cpu --kernels gpu_two_pass --log2-min 26 --log2-max 30 --log2-step 2 --samples 5 --dists uniform --dtypes float32,float64 --out $OUT/bench_fam --force
step $L/memcheck_rows_69.log $(limit 60 110) compute-sanitizer --tool memcheck --error-exitcode 9 $T/rows_test --gtest_filter=Rows.ArgmaxOnTies*
step $L/verify_families_69.log $(limit 40 60) $B verify --kernels gpu_two_pass --sizes 0,1,1000 --dists uniform
cp $OUT/bench_fam/bench_families.csv $L/bench_families_69.csv 2>/dev/null
cd $OUT && tar czf session.tar.gz logs
