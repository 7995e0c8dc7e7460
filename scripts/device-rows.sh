#!/usr/bin/env bash
# device-rows: the GPU check and study of issue 6 (row kernels) in one script, for a lent H200 (or
# any CUDA machine) with a configured tree in build/cuda (`cmake --preset cuda`, as
# scripts/device-check.sh makes it). About 2 minutes; every step has a time limit, so the script
# always finishes within ~3 minutes and leaves what it got in $OUT.
#   1. build the two targets it runs (incremental: seconds when the tree is already built)  -> build.log
#   2. ctest -L gpu -R Rows: GPU bits == model bits, zero rows, one-element rows, run to run  -> ctest_rows.log
#   3. sumlab study variance, full default on the cuda backend, with --verify full first (every row
#      kernel x dtype x 7 shapes x 11 matrices x 3 inputs, GPU bits vs model bits, into
#      row_verify.csv) -> $OUT/variance (run folder) and study.log
#   4. its report (sumlab report)                                                         -> $OUT/variance/report/
#   5. compute-sanitizer memcheck and racecheck over a quick study (every row kernel, both
#      layouts; racecheck covers the block stage's shared memory)                         -> memcheck.log, racecheck.log
# Every log starts with a provenance header (commit, GPU + driver, nvcc, date, command line).
#
# Environment:
#   OUT           where everything goes (default ./out/device-rows)
#   BUILD         the configured build tree (default build/cuda)
#   SUMLAB_JOBS   build parallelism (default: all cores)
#   SUMLAB_ROWS_SANITIZE=0 skips step 5
set -uo pipefail

OUT=${OUT:-$PWD/out/device-rows}
BUILD=${BUILD:-build/cuda}
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
mkdir -p "$OUT"
T0=$SECONDS
JOBS=${SUMLAB_JOBS:-$(nproc)}
DEADLINE=${SUMLAB_DEADLINE:-175}  # seconds from the start; each step's limit is cut to fit
SCRIPT=device-rows
. "$(dirname "$0")/device-lib.sh"

# --- 1. build -----------------------------------------------------------------------------------
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  say "no configured tree in $BUILD: configuring with the cuda preset"
  step "$OUT/configure.log" "$(limit 60 100)" cmake --preset cuda -DSUMLAB_BENCH=OFF
fi
step "$OUT/build.log" "$(limit 90 80)" cmake --build "$BUILD" -j"$JOBS" --target sumlab rows_test
BUILD_RC=$?
BIN=$BUILD/sumlab
if [ ! -x "$BIN" ]; then say "no sumlab binary: see build.log"; tail -30 "$OUT/build.log"; exit 1; fi

# --- 2. gpu tests ---------------------------------------------------------------------------------
step "$OUT/ctest_rows.log" "$(limit 45 80)" ctest --test-dir "$BUILD" -L gpu -R Rows --output-on-failure
CTEST_RC=$?

# --- 3. the study, verified first -------------------------------------------------------------------
step "$OUT/study.log" "$(limit 75 35)" "$BIN" study variance --backend cuda --verify full --out "$OUT/variance" --force
STUDY_RC=$?

# --- 4. report --------------------------------------------------------------------------------------
REPORT_RC=skipped
if [ -z "${SUMLAB_NO_REPORT:-}" ]; then  # device-all.sh renders on the CPU machine instead
  step "$OUT/report.log" "$(limit 40 20)" "$BIN" report "$OUT/variance" --force
  REPORT_RC=$?
fi

# --- 5. sanitizers ------------------------------------------------------------------------------------
MEMCHECK_RC=skipped; RACECHECK_RC=skipped
if [ "${SUMLAB_ROWS_SANITIZE:-1}" != 0 ]; then
  QUICK=("$BIN" study variance --backend cuda --quick --verify none --reps 1 --offsets 1e4 --scales 10 --force)
  step "$OUT/memcheck.log" "$(limit 30 15)" compute-sanitizer --tool memcheck --error-exitcode 99 \
    "${QUICK[@]}" --out "$OUT/variance-memcheck"
  MEMCHECK_RC=$?
  step "$OUT/racecheck.log" "$(limit 30 0)" compute-sanitizer --tool racecheck --error-exitcode 99 \
    "${QUICK[@]}" --out "$OUT/variance-racecheck"
  RACECHECK_RC=$?
  rm -rf "$OUT/variance-memcheck" "$OUT/variance-racecheck"
fi

say "done: build $BUILD_RC, ctest $CTEST_RC, study $STUDY_RC, report $REPORT_RC, memcheck $MEMCHECK_RC, racecheck $RACECHECK_RC"
echo "===== ctest (Rows) ====="; grep -E "tests passed|tests failed|Failed|Skipped|Not Run" "$OUT/ctest_rows.log" | head -10
echo "===== row verify (GPU bits vs model bits) ====="; sed -n '/^row kernels:/,/^  *total\|^total/p' "$OUT/study.log" | head -30
grep -E "first failure|WARNING" "$OUT/study.log" | head -10
echo "===== variance study ====="; grep -E "copy of|10000 |1e\+06|1000000 |argmax:|^variance:|^sumlab:" "$OUT/study.log" | head -24
echo "===== sanitizers ====="
for f in memcheck racecheck; do [ -f "$OUT/$f.log" ] && grep -E "ERROR SUMMARY|RACECHECK SUMMARY|exit status" "$OUT/$f.log" | tail -2; done
ls -la "$OUT" "$OUT/variance" 2>/dev/null
