#pragma once
// segmented_scan: the (head, value) operator (core/scan/segmented_op.hpp) scanned over the whole
// array in tiles, in one pass over the data after a small pass over the offsets:
//   tile_first_kernel  first[b] = the first segment j with o_j >= b * tile (so every tile finds its
//                      segments without a search);
//   chained_segmented_kernel  per tile: the head flags from the offsets into shared memory, the
//                      values staged (coalesced) and taken back blocked, the tile scan, the carry
//                      from the tiles before by the deterministic chained look-back
//                      (gpu/block/chained_lookback.cuh: the left fold of the tile aggregates, the
//                      model's carry), every element's scan value into shared memory, and each
//                      segment that ends in the tile takes the value at its last element; an
//                      empty segment takes +0.
// The exact order (thread folds, shfl_up Hillis-Steele warps, a serial fold of warp totals, the
// left fold of the tile aggregates) is written out in core/segmented/segmented_model.hpp, whose
// model this code must match bit for bit.
#include <cstdint>

#include "core/scan/scan_ops.hpp"
#include "core/scan/segmented_op.hpp"
#include "core/segmented/offsets.hpp"
#include "gpu/block/chained_lookback.cuh"
#include "gpu/warp/shuffle.cuh"

namespace sumlab::gpu::seg_detail {

using scan::Flagged;
using scan::segmented_combine;
using segmented::Offset;

// Segment j (0 <= j <= segments, o_{-1} taken as -1) is the lower bound of every tile start x with
// o_{j-1} < x <= o_j; each tile start has exactly one such j because o_segments = n.
__global__ void tile_first_kernel(const Offset* __restrict__ d_offsets, std::int64_t segments, std::int64_t tile,
                                  std::int64_t tiles, std::int64_t* __restrict__ d_first) {
  for (std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j <= segments;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t lo = j == 0 ? 0 : d_offsets[j - 1] + 1, hi = d_offsets[j];
    const std::int64_t b_last = hi / tile < tiles - 1 ? hi / tile : tiles - 1;
    for (std::int64_t b = (lo + tile - 1) / tile; b <= b_last; ++b) d_first[b] = j;
  }
}

__device__ __forceinline__ int seg_pad(int j) { return j + (j >> 5); }

// Shared memory (bytes) for a block of `block` threads with ITEMS items of T: the tile index, 32
// warp totals, 32 warp prefixes and the carry (16-byte aligned), the look-back's stash, each
// warp's staging of 33 * ITEMS values, then one head flag per element of the tile.
template <class T> constexpr std::size_t seg_stash_offset() { return 16 + (65 * sizeof(Flagged<T>) + 15) / 16 * 16; }
template <class T> constexpr std::size_t seg_header_bytes() {
  return seg_stash_offset<T>() + detail::chain_stash_bytes<Flagged<T>>();
}
template <class T> constexpr std::size_t seg_scan_smem(int block, int items) {
  return seg_header_bytes<T>() + std::size_t(block / 32) * 33 * std::size_t(items) * sizeof(T) +
         std::size_t(block) * std::size_t(items);
}

// MAX_THREADS (512 or 1024) bounds the block, so the registers fit every block the shape rules
// allow (segmented::validate_shape).
template <class T, int ITEMS, int MAX_THREADS>
__global__ void __launch_bounds__(MAX_THREADS) chained_segmented_kernel(const T* __restrict__ d_in, const Offset* __restrict__ d_offsets,
                                         std::int64_t segments, std::int64_t n, const std::int64_t* __restrict__ d_first,
                                         detail::ChainTiles<Flagged<T>> chain, T* __restrict__ d_out) {
  using F = Flagged<T>;
  extern __shared__ __align__(16) unsigned char seg_smem[];
  const int tid = int(threadIdx.x), lane = tid & 31, w = tid >> 5, warps = int(blockDim.x) >> 5;
  std::int64_t* s_tile = reinterpret_cast<std::int64_t*>(seg_smem);
  F* s_total = reinterpret_cast<F*>(seg_smem + 16);
  F* s_prefix = s_total + 32;
  F* s_carry = s_total + 64;
  F* stash = reinterpret_cast<F*>(seg_smem + seg_stash_offset<T>());
  T* stage_all = reinterpret_cast<T*>(seg_smem + seg_header_bytes<T>());
  T* stage = stage_all + w * 33 * ITEMS;
  const int tile = int(blockDim.x) * ITEMS;
  unsigned char* head = reinterpret_cast<unsigned char*>(stage_all + warps * 33 * ITEMS);
  if (tid == 0) *s_tile = detail::chain_claim(chain);
  for (int i = tid; i < tile; i += int(blockDim.x)) head[i] = 0;
  __syncthreads();
  const std::int64_t t = *s_tile, begin = t * tile;
  const int count = n - begin < tile ? int(n - begin) : tile;
  const std::int64_t end = begin + count;
  const int warp_first = w * 32 * ITEMS;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int j = k * 32 + lane, i = warp_first + j;
    stage[seg_pad(j)] = i < count ? d_in[begin + i] : T(0);
  }
  // The heads of the segments starting here (the last tile also owns the empty segments at n).
  const std::int64_t first = d_first[t];
  const bool last_tile = end == n;
  for (std::int64_t j = first + tid; j < segments; j += blockDim.x) {
    const std::int64_t o = d_offsets[j];
    if (o > end || (o == end && !last_tile)) break;  // offsets ascend: so do the later j of this thread
    if (o < d_offsets[j + 1]) head[o - begin] = 1;
    else d_out[j] = T(0);
  }
  __syncthreads();
  F item[ITEMS];
  int have = 0;  // items in range
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int p = warp_first + lane * ITEMS + k;
    item[k] = F{head[p] != 0, stage[seg_pad(lane * ITEMS + k)]};
    if (p < count) have = k + 1;
  }
  F fold{false, T(0)};
#pragma unroll
  for (int k = 0; k < ITEMS; ++k)  // constant indices keep item[] in registers
    if (k < have) fold = k == 0 ? item[0] : segmented_combine(fold, item[k]);
  // Hillis-Steele inclusive scan over the warp; every lane reads (shuffles) before it combines.
  F v = fold;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    const F up = warp::shfl(v, d, warp::Shfl::up);
    if (lane >= d) v = segmented_combine(up, v);
  }
  const F lane_prefix = warp::shfl(v, 1, warp::Shfl::up);  // valid for lane > 0
  if (lane == 31) s_total[w] = v;
  __syncthreads();
  if (w == 0) {
    F run = s_total[0];
    if (lane == 0)
      for (int u = 1; u < warps; ++u) {
        s_prefix[u] = run;
        run = segmented_combine(run, s_total[u]);
      }
    const F aggregate = warp::shfl(run, 0, warp::Shfl::lane);
    if (t == 0) {
      if (lane == 0) detail::chain_publish_first(chain, aggregate);
    } else {
      const F carry = detail::chain_look_back<scan::SegmentedOp<T>>(chain, t, aggregate, lane, stash);
      if (lane == 0) *s_carry = carry;
    }
  }
  __syncthreads();
  // The in-tile prefix is combine(warp prefix, lane prefix), built first, then the carry joins.
  bool has = false;
  F p{false, T(0)};
  if (t > 0) {
    p = *s_carry;
    has = true;
  }
  bool have_in = false;
  F in{false, T(0)};
  if (w > 0) {
    in = s_prefix[w];
    have_in = true;
  }
  if (lane > 0) {
    in = have_in ? segmented_combine(in, lane_prefix) : lane_prefix;
    have_in = true;
  }
  if (have_in) {
    p = has ? segmented_combine(p, in) : in;
    has = true;
  }
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    if (k >= have) break;
    p = has ? segmented_combine(p, item[k]) : item[k];
    has = true;
    stage[seg_pad(lane * ITEMS + k)] = p.value;
  }
  __syncthreads();
  // Segment k - 1 ends here when o_k is in (begin, end]: its sum is the scan at o_k - 1.
  for (std::int64_t k = first + tid; k <= segments; k += blockDim.x) {
    const std::int64_t o = d_offsets[k];
    if (o > end) break;
    if (o > begin && d_offsets[k - 1] < o) {
      const int q = int(o - 1 - begin), qw = q / (32 * ITEMS);
      d_out[k - 1] = stage_all[qw * 33 * ITEMS + seg_pad(q - qw * 32 * ITEMS)];
    }
  }
}

}  // namespace sumlab::gpu::seg_detail
