#!/usr/bin/env bash
# device-scan: the GPU check and study of issue 8 (scans) in one script, for a lent H200 (or any CUDA
# machine) with a configured tree in build/cuda (`cmake --preset cuda`, as scripts/device-check.sh
# makes it). About 2-3 minutes; every step has a time limit, so the script always finishes within
# ~4 minutes and leaves what it got in $OUT.
#   1. build the targets it runs (incremental)                                          -> build.log
#   2. ctest -L gpu -R GpuScan: GPU bits == model bits for warp Hillis-Steele and block Blelloch,
#      every operator (plus, max, segmented, affine), 16 shapes, sizes 0 .. 2^20+3, inclusive and
#      exclusive; cub exact on integers; bad shapes; timing                              -> ctest_scan.log
#   3. sumlab study scan, default on the cuda backend, --verify full first               -> $OUT/scan, study.log
#   4. its report (sumlab report)                                                       -> $OUT/scan/report/
#   5. compute-sanitizer memcheck and racecheck over a quick study (both modelled kernels'
#      shared memory: the warp totals and Blelloch's padded tree)                        -> memcheck.log, racecheck.log
#
# Environment:
#   OUT           where everything goes (default ./out/device-scan)
#   BUILD         the configured build tree (default build/cuda)
#   SUMLAB_JOBS   build parallelism (default: all cores)
#   SUMLAB_SCAN_SANITIZE=0 skips step 5
set -uo pipefail

OUT=${OUT:-$PWD/out/device-scan}
BUILD=${BUILD:-build/cuda}
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
mkdir -p "$OUT"
T0=$SECONDS
JOBS=${SUMLAB_JOBS:-$(nproc)}
DEADLINE=${SUMLAB_DEADLINE:-240}  # seconds from the start; each step's limit is cut to fit
SCRIPT=device-scan
. "$(dirname "$0")/device-lib.sh"

# --- 1. build -----------------------------------------------------------------------------------
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  say "no configured tree in $BUILD: configuring with the cuda preset"
  step "$OUT/configure.log" "$(limit 60 150)" cmake --preset cuda -DSUMLAB_BENCH=OFF
fi
step "$OUT/build.log" "$(limit 120 120)" cmake --build "$BUILD" -j"$JOBS" --target sumlab gpu_scan_test
BUILD_RC=$?
BIN=$BUILD/sumlab
if [ ! -x "$BIN" ]; then say "no sumlab binary: see build.log"; tail -30 "$OUT/build.log"; exit 1; fi

# --- 2. gpu tests ---------------------------------------------------------------------------------
step "$OUT/ctest_scan.log" "$(limit 60 110)" ctest --test-dir "$BUILD" -L gpu -R GpuScan --output-on-failure
CTEST_RC=$?

# --- 3. the study, verified first -------------------------------------------------------------------
step "$OUT/study.log" "$(limit 110 40)" "$BIN" study scan --backend cuda --verify full --out "$OUT/scan" --force
STUDY_RC=$?

# --- 4. report --------------------------------------------------------------------------------------
REPORT_RC=skipped
if [ -z "${SUMLAB_NO_REPORT:-}" ]; then
  step "$OUT/report.log" "$(limit 40 25)" "$BIN" report "$OUT/scan" --force
  REPORT_RC=$?
fi

# --- 5. sanitizers ------------------------------------------------------------------------------------
MEMCHECK_RC=skipped; RACECHECK_RC=skipped
if [ "${SUMLAB_SCAN_SANITIZE:-1}" != 0 ]; then
  QUICK=("$BIN" study scan --backend cuda --quick --verify none --runs 1 --det-runs 1 --reps 1 --time-n 70001
         --recurrence-sizes 5000 --work-log2-max 4 --force)
  step "$OUT/memcheck.log" "$(limit 40 20)" compute-sanitizer --tool memcheck --error-exitcode 99 \
    "${QUICK[@]}" --out "$OUT/scan-memcheck"
  MEMCHECK_RC=$?
  step "$OUT/racecheck.log" "$(limit 40 0)" compute-sanitizer --tool racecheck --error-exitcode 99 \
    "${QUICK[@]}" --out "$OUT/scan-racecheck"
  RACECHECK_RC=$?
  rm -rf "$OUT/scan-memcheck" "$OUT/scan-racecheck"
fi

say "done: build $BUILD_RC, ctest $CTEST_RC, study $STUDY_RC, report $REPORT_RC, memcheck $MEMCHECK_RC, racecheck $RACECHECK_RC"
echo "===== ctest (GpuScan) ====="; grep -E "tests passed|tests failed|Failed|Skipped|Not Run" "$OUT/ctest_scan.log" | head -10
echo "===== scan verify (GPU bits vs model bits) ====="; sed -n '/^scans:/,/^total/p' "$OUT/study.log" | head -30
grep -E "first failure|sumlab:" "$OUT/study.log" | head -10
echo "===== scan study ====="; sed -n '/^algorithm  *operator/,/^scan:/p' "$OUT/study.log" | head -30
[ -f "$OUT/scan/scan_determinism.csv" ] && { echo "--- determinism (cub and the large-n runs)"; grep -E "^cub|,1,10," "$OUT/scan/scan_determinism.csv" | head -12; }
[ -f "$OUT/scan/scan_throughput.csv" ] && { echo "--- throughput"; cut -d, -f1-4,7-9 "$OUT/scan/scan_throughput.csv" | head -40; }
echo "===== sanitizers ====="
for f in memcheck racecheck; do [ -f "$OUT/$f.log" ] && grep -E "ERROR SUMMARY|RACECHECK SUMMARY|exit status" "$OUT/$f.log" | tail -2; done
ls -la "$OUT" "$OUT/scan" 2>/dev/null
