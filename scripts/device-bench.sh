#!/usr/bin/env bash
# device-bench: `sumlab bench` on a lent H200 (or any CUDA machine), after scripts/device-check.sh
# has configured and built build/cuda. Writes the run folder to $OUT/bench and the console log to
# $OUT/bench.log, with a provenance header; the report is rendered afterwards on the CPU machine
# (`sumlab report $OUT/bench`).
# Environment: OUT (default ./out/device-bench), BUILD (default build/cuda), SUMLAB_BENCH_ARGS
# (default: the sweep, fp32 and fp64, n = 2^20 .. 2^30), SUMLAB_BENCH_SECONDS (time limit, 240).
set -uo pipefail
OUT=${OUT:-$PWD/out/device-bench}
BUILD=${BUILD:-build/cuda}
mkdir -p "$OUT"
cmake --build "$BUILD" --target sumlab > "$OUT/bench-build.log" 2>&1 || { echo "build failed"; tail -30 "$OUT/bench-build.log"; exit 1; }
ARGS=${SUMLAB_BENCH_ARGS:---sweep --no-cpu}
{
  echo "# sumlab device-bench"
  echo "# commit:  ${SUMLAB_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
  echo "# gpu:     $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1)"
  echo "# date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# command: $BUILD/sumlab bench --force --out $OUT/bench $ARGS"
} > "$OUT/bench.log"
# shellcheck disable=SC2086
timeout --signal=INT --kill-after=10 "${SUMLAB_BENCH_SECONDS:-240}" "$BUILD/sumlab" bench --force --out "$OUT/bench" $ARGS >> "$OUT/bench.log" 2>&1
rc=$?
echo "# exit status: $rc" >> "$OUT/bench.log"
tail -5 "$OUT/bench.log"
exit $rc
