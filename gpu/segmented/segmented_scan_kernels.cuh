#pragma once
// segmented_scan: the (head, value) operator (core/scan/segmented_op.hpp) scanned over the whole
// array in tiles, in four launches after the head flags:
//   heads_kernel      head[o_j] = 1 for every non-empty segment j (after a memset to 0);
//   tile_kernel<false> each tile's aggregate;
//   carry_kernel      one thread folds the aggregates left to right (staged through shared
//                     memory by its block): tile b's carry;
//   tile_kernel<true>  each tile again, seeded with its carry: every element's scan value;
//   gather_kernel     sum_j = scan[o_{j+1} - 1], or +0 for an empty segment.
// The exact order (thread folds, shfl_up Hillis-Steele warps, a serial fold of warp totals) is
// written out in core/segmented/segmented_model.hpp, whose model this code must match bit for bit.
#include <cstdint>

#include "core/scan/segmented_op.hpp"
#include "gpu/warp/shuffle.cuh"

namespace sumlab::gpu::seg_detail {

using scan::Flagged;
using scan::segmented_combine;

__global__ void heads_kernel(const std::int64_t* __restrict__ d_offsets, std::int64_t num_segments,
                             unsigned char* __restrict__ d_head) {
  for (std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < num_segments;
       j += std::int64_t(gridDim.x) * blockDim.x)
    if (d_offsets[j] < d_offsets[j + 1]) d_head[d_offsets[j]] = 1;  // empty neighbours write the same 1
}

// One tile, `items` elements per thread (template: registers). WITH_CARRY = false: write the
// tile's aggregate to d_agg[tile]; true: combine the carry, walk the items and write d_scan.
template <class T, int ITEMS, bool WITH_CARRY>
__global__ void tile_kernel(const T* __restrict__ d_in, const unsigned char* __restrict__ d_head, std::int64_t n,
                            Flagged<T>* __restrict__ d_agg, const Flagged<T>* __restrict__ d_carry,
                            T* __restrict__ d_scan) {
  // Raw storage: Flagged has default member initialisers, and a __shared__ variable cannot have a
  // constructor.
  __shared__ alignas(Flagged<T>) unsigned char s_raw[2 * 32 * sizeof(Flagged<T>)];
  Flagged<T>* s_total = reinterpret_cast<Flagged<T>*>(s_raw);
  Flagged<T>* s_prefix = s_total + 32;
  const int t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5;
  const int warps = static_cast<int>(blockDim.x) >> 5;
  const std::int64_t tile = blockIdx.x;
  const std::int64_t first = tile * blockDim.x * ITEMS + std::int64_t(t) * ITEMS;
  Flagged<T> item[ITEMS];
  int count = 0;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const std::int64_t i = first + k;
    if (i < n) {
      item[k] = Flagged<T>{d_head[i] != 0, d_in[i]};
      count = k + 1;
    }
  }
  Flagged<T> fold{false, T(0)};
  for (int k = 0; k < count; ++k) fold = k == 0 ? item[0] : segmented_combine(fold, item[k]);
  // Hillis-Steele inclusive scan over the warp; every lane reads (shuffles) before it combines.
  Flagged<T> v = fold;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const Flagged<T> up = warp::shfl(v, d, warp::Shfl::up);
    if (lane >= d) v = segmented_combine(up, v);
  }
  const Flagged<T> lane_prefix = warp::shfl(v, 1, warp::Shfl::up);  // valid for lane > 0
  if (lane == 31) s_total[warp] = v;
  __syncthreads();
  if (t == 0) {
    Flagged<T> run = s_total[0];
    for (int w = 1; w < warps; ++w) {
      s_prefix[w] = run;
      run = segmented_combine(run, s_total[w]);
    }
    if (!WITH_CARRY) d_agg[tile] = run;
  }
  if (!WITH_CARRY) return;
  __syncthreads();
  bool have = false;
  Flagged<T> p{false, T(0)};
  if (tile > 0) {
    p = d_carry[tile];
    have = true;
  }
  // The in-tile prefix is combine(warp prefix, lane prefix), built first, then the carry joins.
  bool have_in = false;
  Flagged<T> in{false, T(0)};
  if (warp > 0) {
    in = s_prefix[warp];
    have_in = true;
  }
  if (lane > 0) {
    in = have_in ? segmented_combine(in, lane_prefix) : lane_prefix;
    have_in = true;
  }
  if (have_in) {
    p = have ? segmented_combine(p, in) : in;
    have = true;
  }
  for (int k = 0; k < count; ++k) {
    p = have ? segmented_combine(p, item[k]) : item[k];
    have = true;
    d_scan[first + k] = p.value;
  }
}

// One block: the aggregates pass through shared memory in chunks of carry_chunk, loaded and
// stored by every thread (coalesced), and thread 0 folds each chunk left to right: the same
// combines in the same order as one thread walking global memory, which waited on a load per tile
// (329 ms for the 2^22 tiles of 2^30 floats on an H200, 61 ms staged: docs/performance-notes.md).
inline constexpr int carry_chunk = 1024;
inline constexpr int carry_threads = 256;

template <class T>
__global__ void __launch_bounds__(carry_threads) carry_kernel(const Flagged<T>* __restrict__ d_agg, std::int64_t tiles,
                                                              Flagged<T>* __restrict__ d_carry) {
  // Raw storage: Flagged has default member initialisers, which a __shared__ array may not run.
  __shared__ alignas(Flagged<T>) unsigned char raw[carry_chunk * sizeof(Flagged<T>)];
  Flagged<T>* const chunk = reinterpret_cast<Flagged<T>*>(raw);
  Flagged<T> run;  // thread 0's: the fold of every aggregate before the one it meets next
  for (std::int64_t base = 0; base < tiles; base += carry_chunk) {
    const int m = tiles - base < carry_chunk ? static_cast<int>(tiles - base) : carry_chunk;
    for (int i = static_cast<int>(threadIdx.x); i < m; i += static_cast<int>(blockDim.x)) chunk[i] = d_agg[base + i];
    __syncthreads();
    if (threadIdx.x == 0) {
      int i = 0;
      if (base == 0) run = chunk[i++];  // tile 0 has no carry
      for (; i < m; ++i) {
        const Flagged<T> agg = chunk[i];
        chunk[i] = run;  // tile base + i's carry
        run = segmented_combine(run, agg);
      }
    }
    __syncthreads();
    for (int i = static_cast<int>(threadIdx.x); i < m; i += static_cast<int>(blockDim.x))
      if (base + i > 0) d_carry[base + i] = chunk[i];
    __syncthreads();  // before the next chunk overwrites it
  }
}

template <class T>
__global__ void gather_kernel(const T* __restrict__ d_scan, const std::int64_t* __restrict__ d_offsets,
                              std::int64_t num_segments, T* __restrict__ d_out) {
  for (std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < num_segments;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t b = d_offsets[j], e = d_offsets[j + 1];
    d_out[j] = e > b ? d_scan[e - 1] : T(0);
  }
}

}  // namespace sumlab::gpu::seg_detail
