#!/usr/bin/env bash
# Session 9 run 51: what gpu_fixed_point's second launch costs (scale from the data), and whether a
# programmatic dependent launch or a one-block decision hides it (.debs/ab2/pass2_cost.cu).
set -uo pipefail
export PATH="$PATH:/usr/local/cuda/bin"
T0=$SECONDS
{ echo "# commit: $(git rev-parse HEAD 2>/dev/null || cut -d' ' -f1 .debs/commit.txt) + .debs/ab2 overrides"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nvcc --version | tail -2; date -u +%FT%TZ; } > $OUT/run51.log
nvcc -O3 -std=c++20 -arch=sm_90 --fmad=false -I.debs/ab2 -I. .debs/ab2/pass2_cost.cu -o /tmp/pass2_cost >> $OUT/run51.log 2>&1
echo "build rc=$? at $((SECONDS-T0))s" >> $OUT/run51.log
timeout 200 /tmp/pass2_cost >> $OUT/run51.log 2>&1
echo "# exit $? at $((SECONDS-T0))s" >> $OUT/run51.log
echo "# end at $((SECONDS-T0))s" >> $OUT/run51.log
