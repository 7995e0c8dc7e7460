#!/usr/bin/env bash
# One call on a lent H200 that produces every GPU artefact the issues ask for, within ~9.5 minutes:
#   1. scripts/device-check.sh  set-up (carried .debs), build, `sumlab verify --quick`, the gpu tests,
#                               compute-sanitizer memcheck + racecheck          -> $OUT/check/
#   2. scripts/device-rows.sh   row kernels: gpu tests, variance study (verifies GPU == model bits),
#                               sanitizers                                      -> $OUT/rows/
#   3. scripts/device-determinism.sh  determinism study, golden file           -> $OUT/det/
#   4. error-vs-n and error-vs-cond on the cuda backend                        -> $OUT/accuracy/
#   5. scripts/device-segmented.sh, scripts/device-scan.sh (SUMLAB_SKIP_SEGSCAN skips) -> $OUT/seg, $OUT/scan
#   6. scripts/device-bench.sh  sumlab bench --sweep (SUMLAB_SKIP_BENCH skips)  -> $OUT/bench/
#   7. sumlab study dot --backend cuda (SUMLAB_SKIP_DOT skips)                  -> $OUT/dot/
# All steps together take more than one device call (10 minutes): use the SUMLAB_SKIP_* variables
# to split them over calls.
# Everything is packed into $OUT/device-all.tar.gz (the tool returns at most 8 files); reports are
# rendered afterwards on the CPU machine with `sumlab report`.
# Usage: scripts/device-stamp.sh here, then (device tool, carry .debs): SUMLAB_DEBS=.debs OUT=$OUT scripts/device-all.sh
set -uo pipefail
export SUMLAB_NO_REPORT=1
# The commit the copy was sent from (provenance.json, the logs' headers): scripts/device-stamp.sh.
source scripts/device-stamp.sh
OUT=${OUT:-$PWD/out/device-all}
mkdir -p "$OUT"
T0=$SECONDS
say() { echo "[device-all +$((SECONDS - T0))s] $*" | tee -a "$OUT/device-all.log"; }

say "1. check (set-up, build, verify --quick, gpu tests, sanitizers)"
OUT="$OUT/check" SUMLAB_DEADLINE=${SUMLAB_CHECK_DEADLINE:-400} SUMLAB_VERIFY_ARGS="--quick" \
  bash scripts/device-check.sh > "$OUT/check.console" 2>&1
say "check exit $?"

# The dependency prefix device-check.sh unpacked, for the incremental builds below.
U=/tmp/sumlab-deps/usr
if [ -d "$U" ]; then
  export CMAKE_PREFIX_PATH="$U" CPATH="$U/include:$U/include/x86_64-linux-gnu:$U/include/eigen3"
  export LIBRARY_PATH="$U/lib/x86_64-linux-gnu" LD_LIBRARY_PATH="$U/lib/x86_64-linux-gnu"
  export PKG_CONFIG_PATH="$U/lib/x86_64-linux-gnu/pkgconfig:$U/share/pkgconfig"
fi
[ -x build/cuda/sumlab ] || { say "no build/cuda/sumlab: stopping"; tail -40 "$OUT/check.console"; exit 1; }

if [ -z "${SUMLAB_SKIP_ROWS:-}" ]; then
say "2. rows"
OUT="$OUT/rows" SUMLAB_DEADLINE=${SUMLAB_ROWS_DEADLINE:-110} bash scripts/device-rows.sh > "$OUT/rows.console" 2>&1
say "rows exit $?"
fi

say "3. determinism"
OUT="$OUT/det" SUMLAB_DEADLINE=${SUMLAB_DET_DEADLINE:-200} bash scripts/device-determinism.sh > "$OUT/det.console" 2>&1
say "determinism exit $?"

say "4. accuracy studies on the cuda backend"
mkdir -p "$OUT/accuracy"
# To n = 2^32 (16 GiB of float32 per input), every GPU kernel and the exact sum, two distributions,
# ten seeds at every power of two (280 cells in 2 min on an H100; one seed at every second power
# left each growth fit on 7 noisy values: the report could place one subject in a growth group):
timeout --signal=INT --kill-after=10 "${SUMLAB_EVN_SECONDS:-300}" build/cuda/sumlab study error-vs-n --backend cuda \
  --log2-min 20 --log2-max 32 --log2-step 1 --seeds 10 --dtypes float32 --dists uniform,normal --algorithms exact \
  --out "$OUT/accuracy/error-vs-n" > "$OUT/accuracy/error-vs-n.log" 2>&1
say "error-vs-n exit $? (124/130: time limit; the rows finished so far are kept)"
[ -z "${SUMLAB_SKIP_COND:-}" ] && timeout --signal=INT --kill-after=10 "${SUMLAB_EVC_SECONDS:-30}" build/cuda/sumlab study error-vs-cond --backend cuda \
  --seeds 1 --out "$OUT/accuracy/error-vs-cond" > "$OUT/accuracy/error-vs-cond.log" 2>&1
say "error-vs-cond exit $?"

if [ -z "${SUMLAB_SKIP_SEGSCAN:-}" ]; then
  say "5. segmented and scan"
  OUT="$OUT/seg" SUMLAB_DEADLINE=${SUMLAB_SEG_DEADLINE:-120} bash scripts/device-segmented.sh > "$OUT/seg.console" 2>&1
  say "segmented exit $?"
  OUT="$OUT/scan" SUMLAB_DEADLINE=${SUMLAB_SCAN_DEADLINE:-150} bash scripts/device-scan.sh > "$OUT/scan.console" 2>&1
  say "scan exit $?"
fi

if [ -z "${SUMLAB_SKIP_BENCH:-}" ]; then
  say "6. bench"
  OUT="$OUT/bench" bash scripts/device-bench.sh > "$OUT/bench.console" 2>&1
  say "bench exit $?"
fi

if [ -z "${SUMLAB_SKIP_DOT:-}" ]; then
  say "7. dot"
  timeout --signal=INT --kill-after=10 "${SUMLAB_DOT_SECONDS:-60}" build/cuda/sumlab study dot --backend cuda \
    --out "$OUT/dot" > "$OUT/dot.log" 2>&1
  say "dot exit $?"
fi

say "packing"
(cd "$OUT" && tar -czf device-all.tar.gz --exclude=device-all.tar.gz $(ls -A | grep -v "^device-all"))
ls -la "$OUT/device-all.tar.gz" | tee -a "$OUT/device-all.log"
# Only the archive and this log travel back (the tool returns at most 8 files).
find "$OUT" -mindepth 1 -maxdepth 1 ! -name device-all.tar.gz ! -name device-all.log -exec rm -rf {} +
say "done"
