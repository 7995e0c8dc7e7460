#pragma once
// Warp level: the five-step shuffle trees (core/launch_shape.hpp; CPU model:
// core/order_model/warp_tree.hpp). Every lane calls combine(own, partner), including the lanes
// whose __shfl_down_sync returns their own value (i + off >= 32): they add their value to itself,
// exactly as the model does. All 32 lanes must call (blocks are whole warps).
#include "core/launch_shape.hpp"
#include "core/order_model/reduce_ops.hpp"
#include "gpu/warp/shuffle.cuh"

namespace sumlab::gpu::detail {

// Lane 0 (every lane, for xor_butterfly) returns the warp's total.
template <class Op>
__device__ __forceinline__ typename Op::Acc warp_reduce(typename Op::Acc v, WarpStage w) {
  const warp::Shfl k = w == WarpStage::shfl_down ? warp::Shfl::down : warp::Shfl::xor_lane;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = Op::combine(v, warp::shfl(v, off, k));
  return v;
}

}  // namespace sumlab::gpu::detail
