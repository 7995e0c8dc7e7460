#pragma once
// block_per_segment and warp_per_segment: one block (or one warp) per segment, the thread chains
// of the sum kernels and their trees (gpu/block/block_reduce.cuh, gpu/warp/warp_reduce.cuh).
// Order: core/segmented/strategy.hpp; CPU model: core/segmented/segmented_model.cpp.
// Indices are 64-bit throughout; segments are visited grid-stride, so any segment count runs with
// a bounded grid and the order of a segment does not depend on the grid.
#include <cstdint>

#include "core/order_model/reduce_ops.hpp"
#include "gpu/block/block_reduce.cuh"
#include "gpu/warp/warp_reduce.cuh"

namespace sumlab::gpu::seg_detail {

template <class T>
__global__ void block_per_segment_kernel(const T* __restrict__ d_in, const std::int64_t* __restrict__ d_offsets,
                                         std::int64_t num_segments, T* __restrict__ d_out) {
  using Op = PlainSumOp<T>;
  __shared__ T s_warp[32];
  for (std::int64_t j = blockIdx.x; j < num_segments; j += gridDim.x) {
    const std::int64_t begin = d_offsets[j], end = d_offsets[j + 1];
    T acc = Op::identity();
    for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) acc = Op::add(acc, d_in[i]);
    acc = detail::block_reduce<Op>(acc, WarpStage::shfl_down, BlockStage::warp_of_warps, s_warp);
    if (threadIdx.x == 0) d_out[j] = acc;
    __syncthreads();  // s_warp is reused by the next segment
  }
}

template <class T>
__global__ void warp_per_segment_kernel(const T* __restrict__ d_in, const std::int64_t* __restrict__ d_offsets,
                                        std::int64_t num_segments, T* __restrict__ d_out) {
  using Op = PlainSumOp<T>;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const std::int64_t warps_per_block = blockDim.x >> 5;
  const std::int64_t first = std::int64_t(blockIdx.x) * warps_per_block + (threadIdx.x >> 5);
  const std::int64_t stride = std::int64_t(gridDim.x) * warps_per_block;
  // The loop condition is uniform across a warp, so all 32 lanes reach every shuffle.
  for (std::int64_t j = first; j < num_segments; j += stride) {
    const std::int64_t begin = d_offsets[j], end = d_offsets[j + 1];
    T acc = Op::identity();
    for (std::int64_t i = begin + lane; i < end; i += 32) acc = Op::add(acc, d_in[i]);
    acc = detail::warp_reduce<Op>(acc, WarpStage::shfl_down);
    if (lane == 0) d_out[j] = acc;
  }
}

}  // namespace sumlab::gpu::seg_detail
