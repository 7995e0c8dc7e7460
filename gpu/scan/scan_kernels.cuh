#pragma once
// The __global__ kernels of the modelled scans (order: core/scan/scan_kernel.hpp; model:
// core/scan/scan_model.hpp). One block per tile of blockDim.x * items elements. The
// scan-then-propagate kernels write the tile's local scan and its total, and add_carry_kernel
// applies the scanned totals afterwards; the chained kernel does the whole scan in one pass.
#include <cstdint>
#include <type_traits>

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
// owns l * ITEMS .. l * ITEMS + ITEMS - 1), free of bank conflicts both ways (chained_striped,
// chained_blocked); the tile is chained to its predecessors (chained_lookback.cuh; for 4-byte values
// every warp polls a window of 32 of them, then warp 0 folds); the outputs leave through the same
// staging.
//
// Where a warp's element j = k * 32 + lane sits in its staging. An odd ITEMS needs no padding:
// lanes l * ITEMS + k (and, for values of 8 or 16 bytes, the 16 or 8 lanes of one access phase)
// fall in distinct banks. An even ITEMS (a divisor of 32) pads one word per 32 elements, so j sits
// at j + j / 32. Both are affine in k: an address is a register and an offset, not a register an
// item.
template <int ITEMS> __device__ __forceinline__ int chained_striped(int k, int lane) {
  return ITEMS % 2 ? k * 32 + lane : k * 33 + lane;
}
template <int ITEMS> __device__ __forceinline__ int chained_blocked(int lane, int k) {
  static_assert(ITEMS % 2 == 1 || 32 % ITEMS == 0);
  return ITEMS % 2 ? lane * ITEMS + k : lane * ITEMS + ((lane * ITEMS) >> 5) + k;
}
// In a tile's last, partial stretch: item k of a lane is in range when k * 32 < the value returned
// (the warp's elements left, clamped to its 32 * ITEMS, less the lane): one comparison with a
// constant an item.
template <int ITEMS> __device__ __forceinline__ int chained_live(std::int64_t left, int lane) {
  return int(left < 0 ? 0 : left > 32 * ITEMS ? 32 * ITEMS : left) - lane;
}

// Whether a thread takes its in-tile prefixes again from the staging after the look-back, item by
// item as it writes its outputs, instead of holding them in registers across it (the same
// operations on the same values: the same bits). For + the kernel then needs 32 registers where it
// needed 56 (float, 23 items) or 62 (double), so an SM holds twice the tiles while they wait on the
// chain; at 2^26 on an H200 float32 b512x23 went 0.193 -> 0.177 ms. Max went the other way (float32
// b512x23 0.226 -> 0.273), so it keeps its prefixes; segmented and affine were not measured that
// way (docs/performance-notes.md, "Chained scans").
template <class Op> inline constexpr bool chained_recomputes_prefixes =
    std::is_same_v<Op, scan::PlusOp<float>> || std::is_same_v<Op, scan::PlusOp<double>>;

// Registers: 64 a thread at most where a shape with ITEMS this small may take 1024 threads.
template <class Op, int ITEMS>
__global__ void __launch_bounds__(ITEMS <= 4 ? 1024 : 512)
    chained_tile_kernel(const typename Op::Value* __restrict__ x, std::int64_t n, bool inclusive,
                        typename Op::Value* __restrict__ out, ChainTiles<typename Op::Value> chain) {
  using V = typename Op::Value;
  extern __shared__ __align__(16) unsigned char scan_smem[];
  const int tid = int(threadIdx.x), lane = tid & 31, w = tid >> 5, warps = int(blockDim.x) >> 5;
  // Layout (scan::chained_header_bytes): the tile index and the look-back's 8 ballots, 32 warp
  // totals and the carry, the look-back's stash, then each warp's staging of 33 * ITEMS values.
  static_assert(chain_stash_bytes<V>() == scan::kChainedStashValues * sizeof(V));
  std::int64_t* s_tile = reinterpret_cast<std::int64_t*>(scan_smem);
  unsigned* s_found = reinterpret_cast<unsigned*>(scan_smem + 16);
  V* warp_total = reinterpret_cast<V*>(scan_smem + 64);
  V* s_carry = warp_total + 32;
  V* stash = reinterpret_cast<V*>(scan_smem + scan::chained_stash_offset(sizeof(V)));
  V* stage = reinterpret_cast<V*>(scan_smem + scan::chained_header_bytes(sizeof(V))) + w * 33 * ITEMS;
  if (tid == 0) *s_tile = chain_claim(chain);
  __syncthreads();
  const std::int64_t t = *s_tile, tile = std::int64_t(blockDim.x) * ITEMS, begin = t * tile;
  const std::int64_t count = n - begin < tile ? n - begin : tile;
  const std::int64_t warp_first = std::int64_t(w) * 32 * ITEMS;
  const V* xw = x + begin + warp_first;
  V* ow = out + begin + warp_first;
  if (count == tile) {  // every tile but the last: no bounds (uniform across the block)
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) stage[chained_striped<ITEMS>(k, lane)] = xw[k * 32 + lane];
  } else {  // the last tile: a loop, not unrolled, so that its addressing does not set the registers
    const int live = chained_live<ITEMS>(count - warp_first, lane);
#pragma unroll 1
    for (int k = 0; k < ITEMS; ++k) stage[chained_striped<ITEMS>(k, lane)] = k * 32 < live ? xw[k * 32 + lane] : Op::identity();
  }
  __syncwarp();
  V s[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const V v = stage[chained_blocked<ITEMS>(lane, k)];
    s[k] = k == 0 ? v : Op::combine(s[k - 1], v);
  }
  const V lane_incl = warp_inclusive_scan<Op>(s[ITEMS - 1], lane);
  const V lane_before = warp::shfl(lane_incl, 1, warp::Shfl::up);
  if (lane == 31) warp_total[w] = lane_incl;
  __syncthreads();
  V aggregate{};
  if (w == 0) {
    V tw = lane < warps ? warp_total[lane] : Op::identity();
    tw = warp_inclusive_scan<Op>(tw, lane);
    aggregate = warp::shfl(tw, warps - 1, warp::Shfl::lane);
    if (lane < warps) warp_total[lane] = tw;
    if (t == 0 && lane == 0) chain_publish_first(chain, aggregate);
  }
  if (t > 0) {  // uniform across the block
    // 4-byte values: every warp polls a window, one round trip for the nearest 256 predecessors.
    // Larger values read 2 or 4 words a tile record, and polling 8 windows of them at once made
    // every 8- and 16-byte scan slower on an H200, so warp 0 walks alone for them
    // (docs/performance-notes.md, "Chained scans").
    if constexpr (sizeof(V) == 4) {
      const V carry = chain_look_back_block<Op>(chain, t, aggregate, w, warps, lane, stash, s_found);
      if (tid == 0) *s_carry = carry;
    } else if (w == 0) {
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
  if constexpr (chained_recomputes_prefixes<Op>) {  // the lane's prefixes again, item by item
    V run{}, before{};
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      const V v = stage[chained_blocked<ITEMS>(lane, k)];
      before = run;
      run = k == 0 ? v : Op::combine(run, v);
      V o;
      if (inclusive) o = has_prefix ? Op::combine(prefix, run) : run;
      else if (k == 0) o = has_prefix ? prefix : Op::identity();
      else o = has_prefix ? Op::combine(prefix, before) : before;
      stage[chained_blocked<ITEMS>(lane, k)] = o;
    }
  } else {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
      V o;
      if (inclusive) o = has_prefix ? Op::combine(prefix, s[k]) : s[k];
      else if (k == 0) o = has_prefix ? prefix : Op::identity();
      else o = has_prefix ? Op::combine(prefix, s[k - 1]) : s[k - 1];
      stage[chained_blocked<ITEMS>(lane, k)] = o;
    }
  }
  __syncwarp();
  if (count == tile) {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) ow[k * 32 + lane] = stage[chained_striped<ITEMS>(k, lane)];
  } else {
    const int live = chained_live<ITEMS>(count - warp_first, lane);
#pragma unroll 1
    for (int k = 0; k < ITEMS; ++k)
      if (k * 32 < live) ow[k * 32 + lane] = stage[chained_striped<ITEMS>(k, lane)];
  }
}

// Tile t's look-back alone, on records prepared by the host (gpu_chain_look_back, for tests): one
// block, by all its warps (the 4-byte kernels' chain_look_back_block) or by warp 0 alone
// (chain_look_back); writes P_{t-1} to *carry. The shared memory is the chained kernel's header.
template <class Op>
__global__ void chain_probe_kernel(ChainTiles<typename Op::Value> chain, std::int64_t t, typename Op::Value aggregate,
                                   bool by_block, typename Op::Value* __restrict__ carry) {
  using V = typename Op::Value;
  extern __shared__ __align__(16) unsigned char scan_smem[];
  const int tid = int(threadIdx.x), lane = tid & 31, w = tid >> 5, warps = int(blockDim.x) >> 5;
  unsigned* s_found = reinterpret_cast<unsigned*>(scan_smem + 16);
  V* stash = reinterpret_cast<V*>(scan_smem + scan::chained_stash_offset(sizeof(V)));
  if (by_block) {
    const V p = chain_look_back_block<Op>(chain, t, aggregate, w, warps, lane, stash, s_found);
    if (tid == 0) *carry = p;
  } else if (w == 0) {
    const V p = chain_look_back<Op>(chain, t, aggregate, lane, stash);
    if (lane == 0) *carry = p;
  }
}

}  // namespace sumlab::gpu::detail
