#pragma once
// The __global__ kernels of the modelled scans (order: core/scan/scan_kernel.hpp; model:
// core/scan/scan_model.hpp). One block per tile of blockDim.x * items elements. The
// scan-then-propagate kernels write the tile's local scan and its total, and add_carry_kernel
// applies the scanned totals afterwards; the chained kernel does the whole scan in one pass.
#include <cstdint>

#include "core/scan/scan_kernel.hpp"
#include "core/scan/scan_ops.hpp"
#include "gpu/block/chained_lookback.cuh"
#include "gpu/warp/warp_scan.cuh"

namespace sumlab::gpu::detail {

inline constexpr int kMaxScanItems = 16;

// A thread's in-tile prefix in warp_hillis_steele's order, from the scanned warp totals and lane
// l - 1's inclusive value: combine(warp prefix, lane prefix), either alone where the other is
// absent; false (no prefix) for thread 0.
template <class Op>
__device__ __forceinline__ bool warp_hs_prefix(const typename Op::Value* warp_total, int w, int lane,
                                               const typename Op::Value& lane_before, typename Op::Value& prefix) {
  if (w == 0 && lane == 0) return false;
  if (w == 0) prefix = lane_before;
  else if (lane == 0) prefix = warp_total[w - 1];
  else prefix = Op::combine(warp_total[w - 1], lane_before);
  return true;
}

// warp_hillis_steele: blocked arrangement (thread t owns elements t*items .. t*items + items - 1),
// serial per thread, Hillis-Steele by shuffles per warp, warp 0 scans the warp totals.
template <class Op>
__global__ void warp_hs_tile_kernel(const typename Op::Value* __restrict__ x, std::int64_t n, int items,
                                    bool inclusive, typename Op::Value* __restrict__ out,
                                    typename Op::Value* __restrict__ totals) {
  using V = typename Op::Value;
  extern __shared__ __align__(16) unsigned char scan_smem[];
  V* warp_total = reinterpret_cast<V*>(scan_smem);
  const int tid = int(threadIdx.x), lane = tid & 31, w = tid >> 5, warps = int(blockDim.x) >> 5;
  const std::int64_t tile = std::int64_t(blockDim.x) * items, begin = std::int64_t(blockIdx.x) * tile;
  const std::int64_t count = n - begin < tile ? n - begin : tile;
  const V* xt = x + begin;
  V s[kMaxScanItems];
  for (int k = 0; k < items; ++k) {
    const std::int64_t i = std::int64_t(tid) * items + k;
    const V v = i < count ? xt[i] : Op::identity();
    s[k] = k == 0 ? v : Op::combine(s[k - 1], v);
  }
  const V lane_incl = warp_inclusive_scan<Op>(s[items - 1], lane);
  const V lane_before = warp::shfl(lane_incl, 1, warp::Shfl::up);  // lane l-1's inclusive value (unused on lane 0)
  if (lane == 31) warp_total[w] = lane_incl;
  __syncthreads();
  if (w == 0) {
    V t = lane < warps ? warp_total[lane] : Op::identity();
    t = warp_inclusive_scan<Op>(t, lane);
    if (lane < warps) warp_total[lane] = t;
  }
  __syncthreads();
  V prefix = Op::identity();
  const bool has_prefix = warp_hs_prefix<Op>(warp_total, w, lane, lane_before, prefix);
  V* ot = out + begin;
  for (int k = 0; k < items; ++k) {
    const std::int64_t i = std::int64_t(tid) * items + k;
    if (i >= count) break;
    const V incl = has_prefix ? Op::combine(prefix, s[k]) : s[k];
    if (i == count - 1) totals[blockIdx.x] = incl;
    if (inclusive) ot[i] = incl;
    else if (k == 0) ot[i] = has_prefix ? prefix : Op::identity();
    else ot[i] = has_prefix ? Op::combine(prefix, s[k - 1]) : s[k - 1];
  }
}

__device__ __forceinline__ int blelloch_pad(int i) { return i + (i >> 5); }

// block_blelloch: the tile in shared memory (striped loads: element k*blockDim.x + tid, coalesced),
// Blelloch's up-sweep and down-sweep on the padded indices.
template <class Op>
__global__ void blelloch_tile_kernel(const typename Op::Value* __restrict__ x, std::int64_t n, int items,
                                     bool inclusive, typename Op::Value* __restrict__ out,
                                     typename Op::Value* __restrict__ totals) {
  using V = typename Op::Value;
  extern __shared__ __align__(16) unsigned char scan_smem[];
  V* s = reinterpret_cast<V*>(scan_smem);
  const int tid = int(threadIdx.x), block = int(blockDim.x), m = block * items;
  V* total = s + (m + m / 32);
  const std::int64_t begin = std::int64_t(blockIdx.x) * m;
  for (int k = 0; k < items; ++k) {
    const int i = k * block + tid;
    const std::int64_t g = begin + i;
    s[blelloch_pad(i)] = g < n ? x[g] : Op::identity();
  }
  int offset = 1;
  for (int d = m >> 1; d > 0; d >>= 1, offset <<= 1) {
    __syncthreads();
    for (int i = tid; i < d; i += block) {
      const int ai = blelloch_pad(offset * (2 * i + 1) - 1), bi = blelloch_pad(offset * (2 * i + 2) - 1);
      s[bi] = Op::combine(s[ai], s[bi]);
    }
  }
  __syncthreads();
  if (tid == 0) {
    *total = s[blelloch_pad(m - 1)];
    s[blelloch_pad(m - 1)] = Op::identity();
  }
  for (int d = 1; d < m; d <<= 1) {
    offset >>= 1;
    __syncthreads();
    for (int i = tid; i < d; i += block) {
      const int ai = blelloch_pad(offset * (2 * i + 1) - 1), bi = blelloch_pad(offset * (2 * i + 2) - 1);
      const V t = s[ai];
      s[ai] = s[bi];
      s[bi] = Op::combine(s[bi], t);
    }
  }
  __syncthreads();
  for (int k = 0; k < items; ++k) {
    const int i = k * block + tid;
    const std::int64_t g = begin + i;
    if (g < n) out[g] = inclusive ? Op::combine(s[blelloch_pad(i)], x[g]) : s[blelloch_pad(i)];
  }
  if (tid == 0) totals[blockIdx.x] = *total;
}

// Tiles 1 .. : out[i] = combine(carry[tile of i], out[i]); an exclusive scan's first element of
// each tile takes the carry itself. Grid-stride over i >= tile.
template <class Op>
__global__ void add_carry_kernel(typename Op::Value* __restrict__ out, std::int64_t n, std::int64_t tile,
                                 const typename Op::Value* __restrict__ carry, bool inclusive) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = tile + std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const typename Op::Value c = carry[i / tile];
    out[i] = (!inclusive && i % tile == 0) ? c : Op::combine(c, out[i]);
  }
}

// warp_hs_chained: warp_hillis_steele's tile scan in one pass over the data. Each warp loads its
// 32 * ITEMS elements striped (coalesced) into shared memory and takes them back blocked (lane l
// owns l * ITEMS .. l * ITEMS + ITEMS - 1), the index padded by one word per 32 so both directions
// are free of bank conflicts for 4-byte values; warp 0 chains the tile to its predecessors
// (chained_lookback.cuh) while the other warps wait; the outputs leave through the same staging.
__device__ __forceinline__ int chained_pad(int j) { return j + (j >> 5); }

template <class Op, int ITEMS>
__global__ void chained_tile_kernel(const typename Op::Value* __restrict__ x, std::int64_t n, bool inclusive,
                                    typename Op::Value* __restrict__ out, ChainTiles<typename Op::Value> chain) {
  using V = typename Op::Value;
  extern __shared__ __align__(16) unsigned char scan_smem[];
  const int tid = int(threadIdx.x), lane = tid & 31, w = tid >> 5, warps = int(blockDim.x) >> 5;
  // Layout (scan::chained_header_bytes): the tile index, 32 warp totals and the carry, the
  // look-back's stash, then each warp's staging of 33 * ITEMS values.
  static_assert(chain_stash_bytes<V>() == scan::kChainedStashValues * sizeof(V));
  std::int64_t* s_tile = reinterpret_cast<std::int64_t*>(scan_smem);
  V* warp_total = reinterpret_cast<V*>(scan_smem + 16);
  V* s_carry = warp_total + 32;
  V* stash = reinterpret_cast<V*>(scan_smem + scan::chained_stash_offset(sizeof(V)));
  V* stage = reinterpret_cast<V*>(scan_smem + scan::chained_header_bytes(sizeof(V))) + w * 33 * ITEMS;
  if (tid == 0) *s_tile = chain_claim(chain);
  __syncthreads();
  const std::int64_t t = *s_tile, tile = std::int64_t(blockDim.x) * ITEMS, begin = t * tile;
  const std::int64_t count = n - begin < tile ? n - begin : tile;
  const int warp_first = w * 32 * ITEMS;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int j = k * 32 + lane, i = warp_first + j;
    stage[chained_pad(j)] = i < count ? x[begin + i] : Op::identity();
  }
  __syncwarp();
  V s[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const V v = stage[chained_pad(lane * ITEMS + k)];
    s[k] = k == 0 ? v : Op::combine(s[k - 1], v);
  }
  const V lane_incl = warp_inclusive_scan<Op>(s[ITEMS - 1], lane);
  const V lane_before = warp::shfl(lane_incl, 1, warp::Shfl::up);
  if (lane == 31) warp_total[w] = lane_incl;
  __syncthreads();
  if (w == 0) {
    V tw = lane < warps ? warp_total[lane] : Op::identity();
    tw = warp_inclusive_scan<Op>(tw, lane);
    const V aggregate = warp::shfl(tw, warps - 1, warp::Shfl::lane);
    if (lane < warps) warp_total[lane] = tw;
    if (t == 0) {
      if (lane == 0) chain_publish_first(chain, aggregate);
    } else {
      const V carry = chain_look_back<Op>(chain, t, aggregate, lane, stash);
      if (lane == 0) *s_carry = carry;
    }
  }
  __syncthreads();
  // The thread's prefix: in-tile, then the carry before it.
  V prefix = Op::identity();
  bool has_prefix = warp_hs_prefix<Op>(warp_total, w, lane, lane_before, prefix);
  if (t > 0) {
    prefix = has_prefix ? Op::combine(*s_carry, prefix) : *s_carry;
    has_prefix = true;
  }
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    V o;
    if (inclusive) o = has_prefix ? Op::combine(prefix, s[k]) : s[k];
    else if (k == 0) o = has_prefix ? prefix : Op::identity();
    else o = has_prefix ? Op::combine(prefix, s[k - 1]) : s[k - 1];
    stage[chained_pad(lane * ITEMS + k)] = o;
  }
  __syncwarp();
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const int j = k * 32 + lane, i = warp_first + j;
    if (i < count) out[begin + i] = stage[chained_pad(j)];
  }
}

}  // namespace sumlab::gpu::detail
