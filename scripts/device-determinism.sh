#!/usr/bin/env bash
# device-determinism: the determinism study of issue 5 on a GPU (sized for an H200: about 2 to 3
# minutes, at most 4), in stages that each add cells to one run folder, then the golden file and
# the report. Needs an already-built tree: build/cuda/sumlab (scripts/device-check.sh builds it;
# SUMLAB_REBUILD=1 first configures build/cuda if needed and builds the sumlab target, not counted
# in the 4 minutes; the dev packages must then be present).
#
#   A  n = 2^20, float32 + float64, uniform / normal / cancellation, the full sweep: grids
#      1,SM,2SM,4SM,8SM x blocks 32,128,256,1024 x vectors 1,4 x both mappings, 20 runs per shape
#   B  n = 2^24, float32, uniform / cancellation, the same sweep; a shape stops repeating after
#      0.25 s (at least 2 runs: one block of 32 threads streaming 64 MB is slow)
#   C  n = 2^26, float32, uniform / cancellation (the blog's atomicAdd setup), grids SM..8SM
#   then a --resume pass that runs nothing new and rewrites the classes, summary.json and
#   $OUT/golden-h200.json from everything the folder holds; --check-golden re-runs every golden
#   case once (same bits expected); then `sumlab report`.
# Everything runs within SUMLAB_DEADLINE seconds (default 235): a stage starts only while enough
# time is left and is cut by `timeout` 85 s before the deadline (kept for the golden file, its
# check and the report); finished cells are kept (each is flushed whole), an interrupted one is
# dropped by the next --resume. Expected on an H200: A ~15 s, B ~50 s, C ~25 s, the rest ~45 s.
#
# $OUT receives (the device tool returns at most 8 files):
#   determinism.tar.gz   the run folder (determinism/: CSVs, summary.json, provenance.json) and
#                        its rendered report (determinism/report/)
#   golden-h200.json     bits of every deterministic GPU result (commit under data/)
#   determinism.log      every command, its output and exit status, with a provenance header
# SUMLAB_KEEP_FOLDER=1 also leaves $OUT/determinism in place (more files than the tool returns).
set -uo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-$PWD/out/device-determinism}
BIN=${SUMLAB_BIN:-build/cuda/sumlab}
RUN=$OUT/determinism
GOLDEN=$OUT/golden-h200.json
LOG=$OUT/determinism.log
DEADLINE=${SUMLAB_DEADLINE:-235}  # seconds for everything after the build check
RESERVE=85                          # of which kept for the golden file, its check and the report
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
mkdir -p "$OUT"

if [ -n "${SUMLAB_REBUILD:-}" ]; then
  echo "[device-determinism] incremental build of sumlab (not counted in the study's time)"
  { [ -f build/cuda/build.ninja ] || cmake --preset cuda -DSUMLAB_BENCH=OFF -DSUMLAB_TESTS=OFF; } > "$OUT/build.log" 2>&1
  cmake --build --preset cuda -j"$(nproc)" --target sumlab >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
if [ ! -x "$BIN" ]; then
  echo "[device-determinism] no $BIN: build it first (scripts/device-check.sh, or SUMLAB_REBUILD=1)" >&2
  exit 1
fi

T0=$SECONDS
say() { echo "[device-determinism +$((SECONDS - T0))s] $*" | tee -a "$LOG"; }
left() { echo $(( DEADLINE - (SECONDS - T0) )); }
{
  echo "# sumlab device-determinism"
  echo "# commit:  $(git rev-parse HEAD 2>/dev/null || echo unknown)$([ -n "$(git status --porcelain 2>/dev/null | head -1)" ] && echo ' + uncommitted changes')"
  echo "# gpu:     $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
  echo "# nvcc:    $(nvcc --version 2>/dev/null | tail -2 | tr '\n' ' ')"
  echo "# date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# host:    $(uname -srm), $(nproc) cores"
  echo "# command: $0 $*"
  echo
} > "$LOG"

SWEEP=(--grids 1,SM,2SM,4SM,8SM --blocks 32,128,256,1024 --vectors 1,4 --mappings grid_stride,contiguous --runs 20)
# stage NAME MIN_SECONDS_LEFT ARGS...: run one stage into the run folder if enough time is left.
FIRST=1
stage() {
  local name=$1 need=$2; shift 2
  local l; l=$(( $(left) - RESERVE ))
  if [ "$l" -lt "$need" ]; then say "stage $name skipped: ${l}s left, it needs ~${need}s"; return 0; fi
  local mode=(--force)
  [ $FIRST -eq 0 ] && mode=(--resume)
  FIRST=0
  say "stage $name (limit ${l}s): $*"
  echo "## $BIN study determinism --backend cuda --out $RUN ${mode[*]} $*" >> "$LOG"
  timeout --signal=INT --kill-after=10 "$l" "$BIN" study determinism --backend cuda --out "$RUN" "${mode[@]}" "$@" \
    >> "$LOG" 2> >(grep -v '^determinism [0-9]' >> "$LOG")
  local rc=$?
  echo "# exit status: $rc$([ $rc -eq 124 ] && echo ' (time limit reached: finished cells kept)')" >> "$LOG"
  say "stage $name exit $rc"
}

stage A 60 "${SWEEP[@]}" --sizes 2^20 --dtypes float32,float64 --dists uniform,normal,cancellation
stage B 80 "${SWEEP[@]}" --sizes 2^24 --dtypes float32 --dists uniform,cancellation --max-shape-seconds 0.25
stage C 45 "${SWEEP[@]}" --grids SM,2SM,4SM,8SM --sizes 2^26 --dtypes float32 --dists uniform,cancellation \
  --max-shape-seconds 0.5

# Classes, summary and golden from every cell the folder holds (runs no kernel).
say "classes, summary.json and the golden file"
echo "## $BIN study determinism --backend cuda --out $RUN --resume --summarize-only --save-golden $GOLDEN" >> "$LOG"
timeout 30 "$BIN" study determinism --backend cuda --out "$RUN" --resume --summarize-only --save-golden "$GOLDEN" \
  >> "$LOG" 2> >(grep -v '^determinism [0-9]' >> "$LOG")
echo "# exit status: $?" >> "$LOG"
# The golden file checks itself: every case re-run once must give the same bits again.
say "golden self-check"
echo "## $BIN study determinism --backend cuda --check-golden $GOLDEN" >> "$LOG"
timeout 40 "$BIN" study determinism --backend cuda --check-golden "$GOLDEN" > "$OUT/.check" 2>&1
echo "# exit status: $?" >> "$LOG"
grep -E '^DRIFT' "$OUT/.check" | head -20 >> "$LOG"
grep -vE '^DRIFT' "$OUT/.check" | tail -3 >> "$LOG"
rm -f "$OUT/.check"

if [ -z "${SUMLAB_NO_REPORT:-}" ]; then  # device-all.sh renders on the CPU machine instead
  say "report"
  l=$(left); [ "$l" -lt 20 ] && l=20
  timeout "$l" "$BIN" report "$RUN" --force >> "$LOG" 2>&1
  echo "# report exit status: $? (without matplotlib here, render it elsewhere: sumlab report <folder>)" >> "$LOG"
fi

say "pack"
tar -czf "$OUT/determinism.tar.gz" -C "$OUT" determinism
[ -z "${SUMLAB_KEEP_FOLDER:-}" ] && rm -rf "$RUN"
say "done"
echo
echo "===== classes ====="
sed -n '/^  kernel  /,/^golden:/p' "$LOG" | tail -40
grep -E "^# exit status|skipped|GPU vs model|EXPECTED|golden check" "$LOG" | head -20
ls -la "$OUT"
