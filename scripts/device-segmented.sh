#!/usr/bin/env bash
# device-segmented: the GPU check and study of issue 7 (segmented sums) in one script, for a lent
# H200 (or any CUDA machine) with a configured tree in build/cuda (`cmake --preset cuda`, as
# scripts/device-check.sh makes it). Every step has a time limit, so the script finishes within
# ~4 minutes and leaves what it got in $OUT.
#   1. build the two targets it runs                                                -> build.log
#   2. ctest -L gpu -R GpuSegmented: GPU bits == model bits over shapes x layouts (grid capped to
#      one block too), +0 for empty segments in every strategy (CUB included), run to run -> ctest_segmented.log
#   3. sumlab study segmented on the cuda backend (10 timed runs, 3 repeats): 65536 segments of mean 16 and 256, four size
#      distributions, float32 and float64, every strategy and shape; every modelled run's bits
#      are compared with the model in the study itself (gpu_equals_model)          -> $OUT/segmented, study.log
#   4. its report                                                                   -> $OUT/segmented/report/
#   5. compute-sanitizer memcheck and racecheck over a quick study of the GPU strategies -> memcheck.log, racecheck.log
# Environment: OUT (default ./out/device-segmented), BUILD (default build/cuda), SUMLAB_JOBS,
# SUMLAB_SEGMENTED_SANITIZE=0 skips step 5, SUMLAB_NO_REPORT=1 skips step 4.
set -uo pipefail

OUT=${OUT:-$PWD/out/device-segmented}
BUILD=${BUILD:-build/cuda}
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
mkdir -p "$OUT"
T0=$SECONDS
JOBS=${SUMLAB_JOBS:-$(nproc)}
DEADLINE=${SUMLAB_DEADLINE:-240}
SCRIPT=device-segmented
. "$(dirname "$0")/device-lib.sh"

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  say "no configured tree in $BUILD: configuring with the cuda preset"
  step "$OUT/configure.log" "$(limit 60 150)" cmake --preset cuda -DSUMLAB_BENCH=OFF
fi
step "$OUT/build.log" "$(limit 120 120)" cmake --build "$BUILD" -j"$JOBS" --target sumlab gpu_segmented_test
BUILD_RC=$?
BIN=$BUILD/sumlab
if [ ! -x "$BIN" ]; then say "no sumlab binary: see build.log"; tail -30 "$OUT/build.log"; exit 1; fi

step "$OUT/ctest_segmented.log" "$(limit 60 100)" ctest --test-dir "$BUILD" -L gpu -R GpuSegmented --output-on-failure
CTEST_RC=$?

step "$OUT/study.log" "$(limit 90 40)" "$BIN" study segmented --backend cuda --segments 65536 --mean-sizes 16,256 --reps 10 --runs 3 \
  --out "$OUT/segmented" --force
STUDY_RC=$?

REPORT_RC=skipped
if [ -z "${SUMLAB_NO_REPORT:-}" ]; then
  step "$OUT/report.log" "$(limit 40 25)" "$BIN" report "$OUT/segmented" --force
  REPORT_RC=$?
fi

MEMCHECK_RC=skipped; RACECHECK_RC=skipped
if [ "${SUMLAB_SEGMENTED_SANITIZE:-1}" != 0 ]; then
  QUICK=("$BIN" study segmented --backend cuda --quick --reps 1 --runs 1 --segments 200 --dtypes float32
         --strategies block_per_segment,warp_per_segment,segmented_scan,cub_segmented_reduce,cub_reduce_by_key --force)
  step "$OUT/memcheck.log" "$(limit 40 15)" compute-sanitizer --tool memcheck --error-exitcode 99 \
    "${QUICK[@]}" --out "$OUT/segmented-memcheck"
  MEMCHECK_RC=$?
  step "$OUT/racecheck.log" "$(limit 40 0)" compute-sanitizer --tool racecheck --error-exitcode 99 \
    "${QUICK[@]}" --out "$OUT/segmented-racecheck"
  RACECHECK_RC=$?
  rm -rf "$OUT/segmented-memcheck" "$OUT/segmented-racecheck"
fi

say "done: build $BUILD_RC, ctest $CTEST_RC, study $STUDY_RC, report $REPORT_RC, memcheck $MEMCHECK_RC, racecheck $RACECHECK_RC"
echo "===== ctest (GpuSegmented) ====="; grep -E "tests passed|tests failed|Failed|Skipped|Not Run" "$OUT/ctest_segmented.log" | head -10
echo "===== segmented study ====="; grep -E "copy:|^strategy|^[a-z_]+ +[0-9.e+]+ +[0-9]+$|GPU bits|not \+0|declared|^segmented:|^sumlab:|WARNING" "$OUT/study.log" | head -30
echo "===== sanitizers ====="
for f in memcheck racecheck; do [ -f "$OUT/$f.log" ] && grep -E "ERROR SUMMARY|RACECHECK SUMMARY|exit status" "$OUT/$f.log" | tail -2; done
ls -la "$OUT" "$OUT/segmented" 2>/dev/null
