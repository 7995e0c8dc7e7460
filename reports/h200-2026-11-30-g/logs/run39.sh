#!/usr/bin/env bash
# Session 7 run 39: Nsight Compute on the fixed-point kernel and the experiment's quantisation
# variants (2^26 floats, 132 x 512, the third launch): which pipe or stall limits them.
set -uo pipefail
O=$OUT/r
mkdir -p $O
export PATH="$PATH:/usr/local/cuda/bin"
X=reports/h200-2026-11-30-g/experiments
nvcc -O3 -std=c++20 -arch=sm_90 --fmad=false -I. $X/launch_cost.cu -o /tmp/lc > $O/lc_build.log 2>&1; echo "build rc=$?"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
for k in fixed q_group q_fmul_only; do
  { echo "# commit: $(cut -d' ' -f1 .debs/commit.txt)"; echo "# gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; echo "# date: $(date -u +%FT%TZ)"; echo "# command: ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section InstructionStats --section Occupancy -s 2 -c 1 /tmp/lc one $k";
    timeout 150 $NCU --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section InstructionStats --section Occupancy -s 2 -c 1 /tmp/lc one $k; echo "# exit $?"; } > $O/ncu_$k.log 2>&1
  echo "$k done at ${SECONDS}s"; grep -E "Duration|Issue Slots Busy|Pipe|Stall|Warp Cycles Per Issued|Executed Ipc" $O/ncu_$k.log | head -20
done
