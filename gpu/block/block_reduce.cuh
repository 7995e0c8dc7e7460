#pragma once
// Block level of the shuffle kernels: warp trees, then one tree over the warp totals
// (core/launch_shape.hpp; CPU model: core/order_model/block_tree.hpp's block_stage).
#include "core/launch_shape.hpp"
#include "gpu/warp/warp_reduce.cuh"

namespace sumlab::gpu::detail {

// Every thread of the block calls; thread 0 returns the block total. s_warp: 32 shared words.
// Ends without a barrier: a caller that reuses s_warp first passes a __syncthreads().
template <class Op>
__device__ __forceinline__ typename Op::Acc block_reduce(typename Op::Acc v, WarpStage w, BlockStage bs,
                                                         typename Op::Acc* s_warp) {
  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warps = static_cast<int>(blockDim.x) >> 5;
  v = warp_reduce<Op>(v, w);
  if (lane == 0) s_warp[warp] = v;
  __syncthreads();
  if (bs == BlockStage::smem_tree) {
    // Sequential addressing over the W warp totals; the barrier sits outside the if, so every
    // thread reaches it, and separates each level's writes from the next level's reads.
    for (int h = pow2_ceil(warps) / 2; h > 0; h >>= 1) {
      if (tid < h && tid + h < warps) s_warp[tid] = Op::combine(s_warp[tid], s_warp[tid + h]);
      __syncthreads();
    }
    if (tid == 0) v = s_warp[0];
  } else if (warp == 0) {
    v = lane < warps ? s_warp[lane] : Op::identity();
    v = warp_reduce<Op>(v, w);
  }
  return v;
}

}  // namespace sumlab::gpu::detail
