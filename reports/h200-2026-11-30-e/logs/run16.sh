#!/usr/bin/env bash
# Session 5 run 16: the loads experiment (reports/h200-2026-11-30-e/experiments/loads.cu).
set -uo pipefail
O=$OUT/r; mkdir -p $O
export PATH="$PATH:/usr/local/cuda/bin"
C=$(cut -d' ' -f1 .debs/commit.txt)
hdr() { echo "# commit: $C (+ the experiment file as in the working tree)"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | head -1)"; echo "# nvcc: $(nvcc --version | tail -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: $*"; }
E=reports/h200-2026-11-30-e/experiments
{ hdr nvcc -O3 -std=c++17 -arch=sm_90 --fmad=false -o /tmp/loads $E/loads.cu; nvcc -O3 -std=c++17 -arch=sm_90 --fmad=false -Xptxas -v -o /tmp/loads $E/loads.cu 2>&1 | grep -E "registers|error" ; echo "# exit $?"; } > $O/run16_build.log 2>&1
echo "built at $SECONDS s"
{ hdr /tmp/loads; timeout 300 /tmp/loads; echo "# exit $?"; } > $O/run16_loads.log 2>&1
echo "ran at $SECONDS s"
tail -5 $O/run16_loads.log
