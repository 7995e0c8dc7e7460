#pragma once
// Warp level: the five-step shuffle trees (core/launch_shape.hpp; CPU model:
// core/order_model/warp_tree.hpp). Every lane calls combine(own, partner), including the lanes
// whose __shfl_down_sync returns their own value (i + off >= 32): they add their value to itself,
// exactly as the model does. All 32 lanes must call (blocks are whole warps).
#include "core/launch_shape.hpp"
#include "core/order_model/reduce_ops.hpp"

namespace sumlab::gpu::detail {

inline constexpr unsigned full_mask = 0xffffffffu;

__device__ __forceinline__ float shuffle(float v, int off, WarpStage w) {
  return w == WarpStage::shfl_down ? __shfl_down_sync(full_mask, v, off) : __shfl_xor_sync(full_mask, v, off);
}
__device__ __forceinline__ double shuffle(double v, int off, WarpStage w) {
  return w == WarpStage::shfl_down ? __shfl_down_sync(full_mask, v, off) : __shfl_xor_sync(full_mask, v, off);
}
template <class T>
__device__ __forceinline__ KahanPair<T> shuffle(KahanPair<T> v, int off, WarpStage w) {
  return KahanPair<T>{shuffle(v.s, off, w), shuffle(v.c, off, w)};
}

// Lane 0 (every lane, for xor_butterfly) returns the warp's total.
template <class Op>
__device__ __forceinline__ typename Op::Acc warp_reduce(typename Op::Acc v, WarpStage w) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = Op::combine(v, shuffle(v, off, w));
  return v;
}

}  // namespace sumlab::gpu::detail
