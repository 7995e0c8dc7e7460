#!/usr/bin/env bash
# Session 7 run 41: the bulk loader reading the next tile's share before the fixed-point kernel
# computes the current one (for_each_bulk_group<Ahead>), against main's loader: the launch-cost
# experiment built against both (2^24, 2^26, 2^28).
set -uo pipefail
O=$OUT/r
mkdir -p $O
export PATH="$PATH:/usr/local/cuda/bin"
X=reports/h200-2026-11-30-g/experiments
nvcc -O3 -std=c++20 -arch=sm_90 --fmad=false -I. $X/launch_cost.cu -o /tmp/lc_new > $O/lc_build.log 2>&1 &
nvcc -O3 -std=c++20 -arch=sm_90 --fmad=false -I.debs/ab -I. $X/launch_cost.cu -o /tmp/lc_main >> $O/lc_build_main.log 2>&1
wait; echo "built at ${SECONDS}s"; ls -la /tmp/lc_new /tmp/lc_main | wc -l
hdr() { echo "# commit: $1"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: $2"; }
{ hdr "$(cut -d' ' -f1 .debs/commit.txt | cut -d+ -f1) (the kernels: built with -I.debs/ab, that commit's loader and kernel headers)" "/tmp/lc_main"; timeout 100 /tmp/lc_main; echo "# exit $?"; } > $O/lc_main.log 2>&1
{ hdr "$(cut -d' ' -f1 .debs/commit.txt)" "/tmp/lc_new"; timeout 100 /tmp/lc_new; echo "# exit $?"; } > $O/lc_new.log 2>&1
paste <(grep -E "fixed|exact|cub" $O/lc_main.log) <(grep -E "fixed|exact|cub" $O/lc_new.log | awk '{print $(NF-3), $NF}')
echo "end at ${SECONDS}s"
