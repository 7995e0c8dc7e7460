#!/usr/bin/env bash
# gpu-busy: runs a command with bench/gpu_busy.cpp preloaded and prints how much of its life the
# GPU worked (CUPTI's record of every kernel, copy and memset), e.g.
#   scripts/gpu-busy.sh build/cuda/sumlab study error-vs-n --backend cuda --algorithms none ...
# The library is built on first use against the machine's own CUPTI (the CUDA toolkit's
# extras/CUPTI, or the nvidia-cuda-cupti wheel PyTorch brings), whose activity record types it
# names from the header (their layout changes between CUPTI versions).
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: scripts/gpu-busy.sh COMMAND [ARGS...]" >&2; exit 2; }
LIB=${SUMLAB_GPU_BUSY_LIB:-$PWD/build/gpu_busy/libgpubusy.so}
if [ ! -f "$LIB" ]; then
  CUPTI=""
  for d in "${CUDA_HOME:-/usr/local/cuda}/extras/CUPTI" \
           $(python3 -c 'import nvidia, os; [print(os.path.join(p, s)) for p in nvidia.__path__ for s in ("cu13", "cuda_cupti")]' 2>/dev/null); do
    if [ -f "$d/include/cupti_activity.h" ]; then CUPTI=$d; break; fi
  done
  [ -n "$CUPTI" ] || { echo "gpu-busy: no CUPTI found (CUDA's extras/CUPTI or the nvidia-cuda-cupti wheel)" >&2; exit 3; }
  H=$CUPTI/include/cupti_activity.h
  LIBDIR=$CUPTI/lib; [ -d "$CUPTI/lib64" ] && LIBDIR=$CUPTI/lib64
  SO=$(cd "$LIBDIR" && ls libcupti.so* | sort -V | tail -1)
  last() { grep -o "} $1[0-9]*;" "$H" | tr -d '}; ' | sort -V | tail -1; }
  mkdir -p "$(dirname "$LIB")"
  g++ -std=c++20 -shared -fPIC -O2 bench/gpu_busy.cpp -I"$CUPTI/include" -I"${CUDA_HOME:-/usr/local/cuda}/include" \
    "$LIBDIR/$SO" -Wl,-rpath,"$LIBDIR" -DKERNEL_RECORD="$(last CUpti_ActivityKernel)" \
    -DMEMCPY_RECORD="$(last CUpti_ActivityMemcpy)" -DMEMSET_RECORD="$(last CUpti_ActivityMemset)" -o "$LIB"
fi
LD_PRELOAD="$LIB${LD_PRELOAD:+:$LD_PRELOAD}" exec "$@"
