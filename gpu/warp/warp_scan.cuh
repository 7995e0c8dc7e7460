#pragma once
// Warp level of the scans: an inclusive Hillis-Steele scan across the 32 lanes by __shfl_up_sync.
// Step off = 1, 2, 4, 8, 16: every lane fetches lane (l - off)'s value; lanes l >= off take
// combine(fetched, own), the others keep their own (their fetch returns their own value and is
// ignored). The CPU model (core/scan/scan_model.hpp) runs the same five rounds. All 32 lanes must
// call (blocks are whole warps).
#include "core/scan/scan_ops.hpp"
#include "gpu/warp/shuffle.cuh"

namespace sumlab::gpu::detail {

template <class Op>
__device__ __forceinline__ typename Op::Value warp_inclusive_scan(typename Op::Value v, int lane) {
#pragma unroll
  for (int off = 1; off < 32; off *= 2) {
    const typename Op::Value up = warp::shfl(v, off, warp::Shfl::up);
    if constexpr (Op::guard_steps) {
      if (lane >= off) v = Op::combine(up, v);
    } else {  // combined and selected: no branch (scan_ops.hpp)
      const typename Op::Value c = Op::combine(up, v);
      v = lane >= off ? c : v;
    }
  }
  return v;
}

}  // namespace sumlab::gpu::detail
