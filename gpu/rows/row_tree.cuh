#pragma once
// The row kernels' group reduction on the GPU (order: core/row_reduce/row_kernel.hpp; the CPU model
// of the same order: core/row_reduce/row_tree.hpp): XOR butterfly in every warp, for block_per_row
// a second butterfly over the warp totals run by every warp, then lane 0's value broadcast.
#include <cstdint>
#include <cstring>

#include "core/row_reduce/row_kernel.hpp"
#include "gpu/warp/shuffle.cuh"

namespace sumlab::gpu::rows {

// Shared memory for 32 states of any row kernel (the largest: RowMoments<double>, 24 bytes).
inline constexpr int smem_state_bytes = 32 * 32;

// Five steps m = 16, 8, 4, 2, 1: lane i computes combine(own, lane i ^ m's value). All 32 lanes call.
template <class Op> __device__ __forceinline__ typename Op::State butterfly(typename Op::State v) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) v = Op::combine(v, warp::shfl(v, m, warp::Shfl::xor_lane));
  return v;
}

// Which row this thread works on, its index t among the row's T threads, and whether the block
// stage runs.
struct RowGroup {
  std::int64_t row;
  int t;
  int threads;
  bool block_stage;
};

__device__ __forceinline__ RowGroup row_group(row_reduce::RowLayout layout) {
  if (layout == row_reduce::RowLayout::warp_per_row) {
    const std::int64_t rows_per_block = blockDim.x >> 5;
    return RowGroup{std::int64_t(blockIdx.x) * rows_per_block + (threadIdx.x >> 5),
                    static_cast<int>(threadIdx.x & 31), 32, false};
  }
  return RowGroup{std::int64_t(blockIdx.x), static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x), true};
}

// Every thread of the row's group calls (a warp for warp_per_row, the whole block for
// block_per_row: the barriers need every thread). smem: 32 states of shared memory. Returns lane 0's
// result in every thread. Ends with the shared words free for reuse (the second barrier).
template <class Op>
__device__ __forceinline__ typename Op::State group_reduce(typename Op::State v, bool block_stage,
                                                           typename Op::State* smem) {
  v = butterfly<Op>(v);
  if (block_stage) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int warps = static_cast<int>(blockDim.x >> 5);
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    v = lane < warps ? smem[lane] : Op::identity();
    __syncthreads();  // every warp has read the totals before the next reduction writes them
    v = butterfly<Op>(v);
  }
  return warp::shfl(v, 0, warp::Shfl::lane);
}

}  // namespace sumlab::gpu::rows
