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

// Steps m = top, top / 2, .., 1 (top a power of two or 0): lane i computes combine(own, lane i ^ m's
// value). All 32 lanes call. A constant top unrolls the loop.
template <class Op> __device__ __forceinline__ typename Op::State butterfly_from(typename Op::State v, int top) {
#pragma unroll
  for (int m = top; m > 0; m >>= 1) v = Op::combine(v, warp::shfl(v, m, warp::Shfl::xor_lane));
  return v;
}

// The whole warp's butterfly: five steps m = 16, 8, 4, 2, 1.
template <class Op> __device__ __forceinline__ typename Op::State butterfly(typename Op::State v) {
  return butterfly_from<Op>(v, 16);
}

template <class Op> constexpr bool exact_identity() {
  if constexpr (requires { Op::exact_identity; }) return Op::exact_identity;
  return false;
}

// The butterfly over a block's warp totals, lanes >= warps holding the identity. Where the op
// merges the identity exactly (Op::exact_identity: combine(x, identity) is x, and two identities
// give the identity), a lane below the next power of two p >= warps meets only identities at the
// steps m >= p, which leave its value as it is: those steps are skipped, and lane 0 ends with the
// full butterfly's bits (a 128-thread block skips three of the five steps). A sum's identity is
// not exact (-0 + +0 is +0), so it runs them all.
template <class Op> __device__ __forceinline__ typename Op::State butterfly_over_warps(typename Op::State v, int warps) {
  if constexpr (!exact_identity<Op>()) {
    return butterfly<Op>(v);
  } else {
    int p = 1;
    while (p < warps) p <<= 1;
    return butterfly_from<Op>(v, p >> 1);
  }
}

// Which row this thread works on, its index t among the row's T threads, and whether the block
// stage runs. Threads: the block's thread count where the kernel instance fixes it (a
// block_per_row launch of that many threads: row_fixed_threads in gpu/rows/row_stage.hpp), else 0
// and T is read from blockDim.x. A fixed T is a constant through the inlined loops, so a thread's
// elements t, t + T, ... are one address and immediate offsets, not an address computed each.
struct RowGroup {
  std::int64_t row;
  int t;
  int threads;
  bool block_stage;
};

template <int Threads = 0> __device__ __forceinline__ RowGroup row_group(row_reduce::RowLayout layout) {
  if (Threads == 0 && layout == row_reduce::RowLayout::warp_per_row) {  // a fixed count is block_per_row's
    const std::int64_t rows_per_block = blockDim.x >> 5;
    return RowGroup{std::int64_t(blockIdx.x) * rows_per_block + (threadIdx.x >> 5),
                    static_cast<int>(threadIdx.x & 31), 32, false};
  }
  return RowGroup{std::int64_t(blockIdx.x), static_cast<int>(threadIdx.x), Threads != 0 ? Threads : static_cast<int>(blockDim.x),
                  true};
}

// Every thread of the row's group calls (a warp for warp_per_row, the whole block for
// block_per_row: the barriers need every thread). smem: 32 states of shared memory. Returns lane 0's
// result in every thread, and ends with the shared words free for reuse (the second barrier).
// With everyone false the result is the group's first thread's alone (the other threads get
// something else): for a kernel whose last reduction feeds only the values thread 0 writes, the
// block's other warps then skip the butterfly over the warp totals, which every warp runs to have
// it, and no barrier follows (nothing reuses the shared words). The group agrees on everyone.
template <class Op>
__device__ __forceinline__ typename Op::State group_reduce(typename Op::State v, bool block_stage,
                                                           typename Op::State* smem, bool everyone = true) {
  v = butterfly<Op>(v);
  if (block_stage) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const int warps = static_cast<int>(blockDim.x >> 5);
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    if (!everyone && warp != 0) return v;
    v = lane < warps ? smem[lane] : Op::identity();
    if (everyone) __syncthreads();  // every warp has read the totals before the next reduction writes them
    v = butterfly_over_warps<Op>(v, warps);
  }
  return everyone ? warp::shfl(v, 0, warp::Shfl::lane) : v;
}

}  // namespace sumlab::gpu::rows
