#pragma once
// Single-pass tile chaining with a deterministic carry: the decoupled look-back of Merrill and
// Garland ("Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA NVR-2016-002), made
// to give the same bits on every run.
//
// Every tile t publishes its aggregate A_t as soon as it has it, and later its inclusive prefix
//   P_0 = A_0,  P_t = combine(P_{t-1}, A_t)                 (the left fold of the aggregates).
// A tile's carry is P_{t-1}. To find it, warp 0 of tile t looks back for the nearest j < t whose P_j
// is published (while every tile between has its aggregate published) and folds forward:
//   P_{t-1} = combine(...combine(combine(P_j, A_{j+1}), A_{j+2})..., A_{t-1}).
// Which j it finds depends on timing, but the left fold does not: continuing the chain from any P_j
// gives the same operations on the same operands, so P_{t-1} has the same bits on every run.
// (CUB's look-back instead reduces the aggregates it finds as a tree, whose shape depends on j:
// fast, but not reproducible for a non-associative combine.)
//
// Tiles are claimed in order through an atomic counter, not blockIdx.x: a tile that waits only
// waits on tiles already claimed by running blocks, so the chain cannot deadlock whatever order
// the hardware schedules blocks in. The status words carry the launch's epoch, so the arrays are
// zeroed once when allocated and every later launch reuses them without a memset: a status from
// an older launch reads as "nothing published".
//
// Memory order: a value is stored before its status with release semantics; a status is read
// with acquire semantics by the lane that then reads the value, so the value read is the one
// published (PTX memory model: ld.acquire / st.release at gpu scope).
#include <cstdint>

#include "gpu/warp/shuffle.cuh"

namespace sumlab::gpu::detail {

// Device arrays of one chained launch, `tiles` entries each (status zeroed at allocation).
template <class V> struct ChainTiles {
  unsigned* status = nullptr;                // epoch * 4 + state (1: aggregate, 2: inclusive prefix)
  V* aggregate = nullptr;
  V* inclusive = nullptr;
  unsigned long long* counter = nullptr;     // tiles claimed over every launch so far
  unsigned epoch = 1;                        // this launch's number, from 1
  std::int64_t tiles = 0;
};

inline constexpr unsigned kChainAggregate = 1, kChainInclusive = 2;

__device__ __forceinline__ unsigned chain_load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void chain_store_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// This block's tile: tiles are handed out in claim order (one thread calls; the caller
// broadcasts it).
template <class V> __device__ __forceinline__ std::int64_t chain_claim(const ChainTiles<V>& c) {
  const unsigned long long k = atomicAdd(c.counter, 1ull);
  return static_cast<std::int64_t>(k - static_cast<unsigned long long>(c.epoch - 1) * static_cast<unsigned long long>(c.tiles));
}

// Tile 0: its aggregate is its inclusive prefix. One thread calls.
template <class V> __device__ __forceinline__ void chain_publish_first(const ChainTiles<V>& c, const V& aggregate) {
  c.inclusive[0] = aggregate;
  chain_store_release(c.status, c.epoch * 4 + kChainInclusive);
}

// Tile t >= 1, called by all 32 lanes of one warp with the tile's aggregate (the same value in
// every lane): publishes A_t, looks back, publishes P_t = combine(P_{t-1}, A_t) and returns
// P_{t-1} (in every lane).
template <class Op>
__device__ typename Op::Value chain_look_back(const ChainTiles<typename Op::Value>& c, std::int64_t t,
                                              const typename Op::Value& aggregate, int lane) {
  using V = typename Op::Value;
  const unsigned agg_word = c.epoch * 4 + kChainAggregate, incl_word = c.epoch * 4 + kChainInclusive;
  if (lane == 0) {
    c.aggregate[t] = aggregate;
    chain_store_release(c.status + t, agg_word);
  }
  // 1. Windows of 32 tiles ending at t - 1, then further back, until one holds a published P_j;
  //    lane l of the window ending at e (exclusive) watches tile e - 32 + l.
  std::int64_t end = t, j = -1;
  V v{};  // this lane's value in the window where j is found
  for (;;) {
    const std::int64_t k = end - 32 + lane;
    unsigned s;
    do {
      s = k < 0 ? agg_word : chain_load_acquire(c.status + k);
    } while (!__all_sync(warp::full_mask, s == agg_word || s == incl_word));
    const unsigned found = __ballot_sync(warp::full_mask, s == incl_word);
    if (found != 0) {
      const int l = 31 - __clz(static_cast<int>(found));
      j = end - 32 + l;
      if (k >= j) v = s == incl_word ? c.inclusive[k] : c.aggregate[k];  // after this lane's acquire
      break;
    }
    end -= 32;
  }
  // 2. The left fold from P_j, window by window towards t - 1. The later windows' aggregates were
  //    acquired by the same lanes in step 1 (the windows are aligned on t), so plain loads see them.
  V p{};
  for (std::int64_t base = end - 32; base < t; base += 32) {
    if (base != end - 32) {
      const std::int64_t k = base + lane;
      if (k < t) v = c.aggregate[k];
    }
    const int first = base < j ? static_cast<int>(j - base) : 0;
    const int last = t - base < 32 ? static_cast<int>(t - base) : 32;  // lanes [first, last)
    for (int l = first; l < last; ++l) {
      const V w = warp::shfl(v, l, warp::Shfl::lane);
      p = base + l == j ? w : Op::combine(p, w);
    }
  }
  if (lane == 0) {
    c.inclusive[t] = Op::combine(p, aggregate);
    chain_store_release(c.status + t, incl_word);
  }
  return p;
}

}  // namespace sumlab::gpu::detail
