#!/usr/bin/env bash
# Session 8 run 48: debug of run 47's grid-1 mismatches (prints from the scale pass's last block and
# the tail-launched quantising pass).
set -uo pipefail
O=$OUT/r
mkdir -p $O
export SUMLAB_GIT_COMMIT=$(cut -d' ' -f1 .debs/commit.txt)
T0=$SECONDS
export PATH="$PATH:/usr/local/cuda/bin"
OUT=$O/setup SUMLAB_DEBS=.debs SUMLAB_SETUP_ONLY=1 SUMLAB_DEADLINE=700 bash scripts/device-check.sh > $O/setup-console.log 2>&1
echo "setup rc=$? at $((SECONDS-T0))s"
timeout 60 build/cuda/tests/gpu_sum_test '--gtest_filter=GpuBulkLoads/1*' > $O/dbg.log 2>&1
grep -E "DBG|Failure|vs CPU|trace" $O/dbg.log | grep -B3 -A3 "vs CPU" | head -80
grep -c DBG $O/dbg.log
(cd $OUT && tar czf $OUT/r.tgz r)
