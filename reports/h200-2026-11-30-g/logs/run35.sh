#!/usr/bin/env bash
# Session 7 run 35: the launch-cost experiment with the quantisation variants and 3 blocks an SM.
set -uo pipefail
O=$OUT/r
mkdir -p $O
export PATH="$PATH:/usr/local/cuda/bin"
X=reports/h200-2026-11-30-g/experiments
nvcc -O3 -std=c++20 -arch=sm_90 --fmad=false -I. $X/launch_cost.cu -o /tmp/launch_cost > $O/launch_cost_build.log 2>&1; echo "build rc=$?"
{ echo "# commit: $(cut -d' ' -f1 .debs/commit.txt)"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: /tmp/launch_cost modes"; timeout 200 /tmp/launch_cost modes; echo "# exit $?"; } > $O/launch_cost_modes.log 2>&1
cat $O/launch_cost_modes.log
