#pragma once
// Warp level of the scans: an inclusive Hillis-Steele scan across the 32 lanes by __shfl_up_sync.
// Step off = 1, 2, 4, 8, 16: every lane fetches lane (l - off)'s value; lanes l >= off take
// combine(fetched, own), the others keep their own (their fetch returns their own value and is
// ignored). The CPU model (core/scan/scan_model.hpp) runs the same five rounds. All 32 lanes must
// call (blocks are whole warps).
#include "core/scan/scan_ops.hpp"

namespace sumlab::gpu::detail {

inline constexpr unsigned scan_full_mask = 0xffffffffu;

__device__ __forceinline__ float shfl_up(float v, int off) { return __shfl_up_sync(scan_full_mask, v, off); }
__device__ __forceinline__ double shfl_up(double v, int off) { return __shfl_up_sync(scan_full_mask, v, off); }
template <class T> __device__ __forceinline__ scan::Flagged<T> shfl_up(const scan::Flagged<T>& v, int off) {
  return scan::Flagged<T>{__shfl_up_sync(scan_full_mask, int(v.head), off) != 0, shfl_up(v.value, off)};
}
template <class T> __device__ __forceinline__ scan::Affine<T> shfl_up(const scan::Affine<T>& v, int off) {
  return scan::Affine<T>{shfl_up(v.a, off), shfl_up(v.b, off)};
}

template <class Op>
__device__ __forceinline__ typename Op::Value warp_inclusive_scan(typename Op::Value v, int lane) {
#pragma unroll
  for (int off = 1; off < 32; off *= 2) {
    const typename Op::Value up = shfl_up(v, off);
    if (lane >= off) v = Op::combine(up, v);
  }
  return v;
}

}  // namespace sumlab::gpu::detail
