#pragma once
// Single-pass tile chaining with a deterministic carry: the decoupled look-back of Merrill and
// Garland ("Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA NVR-2016-002), made
// to give the same bits on every run.
//
// Every tile t publishes its aggregate A_t as soon as it has it, and later its inclusive prefix
//   P_0 = A_0,  P_t = combine(P_{t-1}, A_t)                 (the left fold of the aggregates).
// A tile's carry is P_{t-1}. To find it, tile t looks back for the nearest j < t whose P_j is
// published (while every tile between has its aggregate published) and folds forward:
//   P_{t-1} = combine(...combine(combine(P_j, A_{j+1}), A_{j+2})..., A_{t-1}).
// Which j it finds depends on timing, but the left fold does not: continuing the chain from any P_j
// gives the same operations on the same operands, so P_{t-1} has the same bits on every run.
// (CUB's look-back instead reduces the aggregates it finds as a tree, whose shape depends on j:
// fast, but not reproducible for a non-associative combine.)
//
// Speed: the newest published prefix can advance by at most one tile per combine on the chain, so
// the fold must cost about one combine's latency per tile. Each window of 32 predecessors is read
// in one round trip (below; chain_look_back_block reads up to 8 windows at once, one a warp), its
// values pass through shared memory, and warp 0's fold over them is unrolled, so the loads leave
// the chain and only the combines stay on it. An operator whose combine is associative bit for bit
// (max: Op::exactly_associative) reduces each window as a tree over the lanes instead: the same
// bits, one combine a window on the chain.
//
// Publication without a fence: a value travels as its 32-bit words, each in a 64-bit word whose
// other half is a tag (epoch * 4 + kind). An aligned 64-bit access is single-copy atomic, so a word
// read with the current tag holds the payload written with it; a record is complete when all its
// words carry the tag. The reader needs no acquire and no second load after the status.
//
// Tiles are claimed in order through an atomic counter, not blockIdx.x: a tile that waits only
// waits on tiles already claimed by running blocks, so the chain cannot deadlock whatever order
// the hardware schedules blocks in. The epoch in every tag means the records are zeroed once when
// allocated and every later launch reuses them: a word from an older launch reads as unpublished.
//
// The first wave, staggered: the tiles resident at a launch's start (`gated` of them) would all
// load at once, every load landing only when most of the wave's bytes have, and then wait on the
// chain together while no slot frees for the next tiles. So tile t of that wave, t >= `gate`,
// starts its loads once tile t - gate has published (chain_claim): the wave's second half loads
// behind its first, as tiles do in the steady state. Only when a tile starts changes, never what
// it adds: the bits are the same. The tile waited on was claimed earlier and publishes without
// waiting on anything, so the gate cannot deadlock either. The host chooses it (gpu/scan.cu: for
// values of 8 bytes or more); the segmented scan has none.
#include <cstdint>
#include <cstring>

#include "gpu/warp/shuffle.cuh"

namespace sumlab::gpu::detail {

// Device arrays of one chained launch (records zeroed at allocation).
inline constexpr unsigned kChainAggregate = 1, kChainInclusive = 2;

template <class V> struct ChainTiles {
  static constexpr int kWords = int(sizeof(V) / 4);
  // Tile t's record: kWords aggregate words, then kWords inclusive-prefix words.
  static constexpr std::size_t record_bytes() { return 2 * kWords * sizeof(unsigned long long); }
  // Where the words of tile t's value of this kind start in `records`.
  __host__ __device__ static constexpr std::int64_t word_index(std::int64_t t, unsigned kind) {
    return t * 2 * kWords + (kind == kChainInclusive ? kWords : 0);
  }
  unsigned long long* records = nullptr;
  unsigned long long* counter = nullptr;  // tiles claimed over every launch so far
  unsigned epoch = 1;                     // this launch's number, from 1
  std::int64_t tiles = 0;
  std::int64_t gate = 0, gated = 0;       // the first wave's stagger (above); 0: none
};

// The tag in a record word's upper half: the launch and the kind of value the payload belongs to.
__host__ __device__ constexpr unsigned chain_tag(unsigned epoch, unsigned kind) { return epoch * 4 + kind; }
__host__ __device__ constexpr unsigned long long chain_word(unsigned epoch, unsigned kind, unsigned payload) {
  return static_cast<unsigned long long>(chain_tag(epoch, kind)) << 32 | payload;
}
// Windows of 32 predecessors whose values a look-back keeps in shared memory; a longer walk
// reloads the nearer windows (their records are complete, so plain loads see them).
inline constexpr int kChainStashWindows = 8;
template <class V> constexpr std::size_t chain_stash_bytes() { return kChainStashWindows * 32 * sizeof(V); }

__device__ __forceinline__ unsigned long long chain_load(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void chain_load_pair(const unsigned long long* p, unsigned long long& x, unsigned long long& y) {
  asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(x), "=l"(y) : "l"(p) : "memory");
}
__device__ __forceinline__ void chain_store(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

template <class V>
__device__ __forceinline__ void chain_publish(const ChainTiles<V>& c, std::int64_t t, unsigned kind, const V& v) {
  unsigned w[ChainTiles<V>::kWords];
  memcpy(w, &v, sizeof(V));
  unsigned long long* r = c.records + ChainTiles<V>::word_index(t, kind);
#pragma unroll
  for (int i = 0; i < ChainTiles<V>::kWords; ++i) chain_store(r + i, chain_word(c.epoch, kind, w[i]));
}

// Tile k's best published value: kChainInclusive with P_k, kChainAggregate with A_k, or 0 while
// neither record is complete. The record's words are read in 16-byte pairs (A and P for a 4-byte
// value): each 64-bit half of a vector access is single-copy atomic, which is all the tags need.
template <class V>
__device__ __forceinline__ unsigned chain_read(const ChainTiles<V>& c, std::int64_t k, V& out) {
  constexpr int K = ChainTiles<V>::kWords;
  static_assert(K == 1 || K % 2 == 0, "a record's halves are read in pairs of words");
  const unsigned long long* r = c.records + ChainTiles<V>::word_index(k, kChainAggregate);  // 16-byte aligned
  unsigned long long a[K], p[K];
  if constexpr (K == 1) {
    chain_load_pair(r, a[0], p[0]);
  } else {
#pragma unroll
    for (int i = 0; i < K; i += 2) {
      chain_load_pair(r + i, a[i], a[i + 1]);
      chain_load_pair(r + K + i, p[i], p[i + 1]);
    }
  }
  bool has_a = true, has_p = true;
#pragma unroll
  for (int i = 0; i < K; ++i) {
    has_a = has_a && unsigned(a[i] >> 32) == chain_tag(c.epoch, kChainAggregate);
    has_p = has_p && unsigned(p[i] >> 32) == chain_tag(c.epoch, kChainInclusive);
  }
  unsigned w[K];
#pragma unroll
  for (int i = 0; i < K; ++i) w[i] = unsigned(has_p ? p[i] : a[i]);
  memcpy(&out, w, sizeof(V));
  return has_p ? kChainInclusive : has_a ? kChainAggregate : 0u;
}

// This block's tile: tiles are handed out in claim order, a tile of the first wave once the tile
// `gate` before it has published (its aggregate or its inclusive prefix). One thread calls; the
// caller broadcasts it.
template <class V> __device__ __forceinline__ std::int64_t chain_claim(const ChainTiles<V>& c) {
  const unsigned long long k = atomicAdd(c.counter, 1ull);
  const auto t = static_cast<std::int64_t>(k - static_cast<unsigned long long>(c.epoch - 1) * static_cast<unsigned long long>(c.tiles));
  if (t >= c.gate && t < c.gated)
    for (unsigned ns = 32;; ns = ns < 256 ? 2 * ns : 256) {
      V v;
      if (chain_read(c, t - c.gate, v) != 0) break;
      __nanosleep(ns);
    }
  return t;
}

// Tile k's aggregate, once chain_read has seen it complete.
template <class V> __device__ __forceinline__ V chain_read_aggregate(const ChainTiles<V>& c, std::int64_t k) {
  constexpr int K = ChainTiles<V>::kWords;
  unsigned w[K];
#pragma unroll
  for (int i = 0; i < K; ++i) w[i] = unsigned(chain_load(c.records + ChainTiles<V>::word_index(k, kChainAggregate) + i));
  V v;
  memcpy(&v, w, sizeof(V));
  return v;
}

// Tile 0: its aggregate is its inclusive prefix. One thread calls.
template <class V> __device__ __forceinline__ void chain_publish_first(const ChainTiles<V>& c, const V& aggregate) {
  chain_publish(c, 0, kChainInclusive, aggregate);
}

// Polls window w of tile t's predecessors (lane l watches tile t - 32 (w + 1) + l) until every
// tile of it has published, puts their values in stash slot w % 8 and returns the lanes that
// hold a published P. All 32 lanes of a warp call.
template <class V>
__device__ __forceinline__ unsigned chain_poll_window(const ChainTiles<V>& c, std::int64_t t, int w, int lane, V* stash) {
  const std::int64_t k = t - 32 * std::int64_t(w + 1) + lane;
  V v{};
  unsigned s, pause = 8;
  for (;;) {
    s = k < 0 ? kChainAggregate : chain_read(c, k, v);
    if (__all_sync(warp::full_mask, s != 0)) break;
    __nanosleep(pause);  // back off: a thousand tiles polling at once slow the L2 for everyone
    pause = pause < 256 ? 2 * pause : pause;
  }
  stash[(w % kChainStashWindows) * 32 + lane] = v;
  return __ballot_sync(warp::full_mask, s == kChainInclusive);
}

// Windows w0, w0 + 1, ... until one holds a published P_j: returns that window, and in jl the
// lane of the nearest P_j in it.
template <class V>
__device__ __forceinline__ int chain_walk(const ChainTiles<V>& c, std::int64_t t, int w0, int lane, V* stash, int& jl) {
  for (int w = w0;; ++w) {
    const unsigned found = chain_poll_window(c, t, w, lane, stash);
    if (found != 0) {
      jl = 31 - __clz(static_cast<int>(found));
      return w;
    }
  }
}

// P_{t-1}: the left fold from P_j (window w, lane jl), window by window towards t - 1 (every lane
// computes it); publishes P_t = combine(P_{t-1}, A_t).
template <class Op>
__device__ typename Op::Value chain_fold(const ChainTiles<typename Op::Value>& c, std::int64_t t, int w, int jl,
                                         const typename Op::Value& aggregate, int lane, typename Op::Value* stash) {
  using V = typename Op::Value;
  V p = stash[(w % kChainStashWindows) * 32 + jl];
  for (int u = w; u >= 0; --u) {
    V* win = stash + (u % kChainStashWindows) * 32;
    if (u < w - (kChainStashWindows - 1)) {  // overwritten by a farther window: reload (its
      __syncwarp();                            // tiles may have published P since: take A)
      win[lane] = chain_read_aggregate(c, t - 32 * std::int64_t(u + 1) + lane);
      __syncwarp();
    }
    const int from = u == w ? jl + 1 : 0;
    if constexpr (Op::exactly_associative) {
      // Any bracketing gives the same bits: the window's aggregates from `from` on reduce as a
      // tree over the lanes, in order (the lanes before `from` hold the identity, an identity on
      // both sides, bit for bit), and one combine a window stays on the chain instead of 32.
      V r = lane >= from ? win[lane] : Op::identity();
#pragma unroll
      for (int off = 1; off < 32; off *= 2) {
        const V q = Op::combine(r, warp::shfl(r, off, warp::Shfl::down));
        r = lane + off < 32 ? q : r;
      }
      p = Op::combine(p, warp::shfl(r, 0, warp::Shfl::lane));
    } else if constexpr (Op::guard_steps) {  // a predicated combine a step
#pragma unroll
      for (int l = 0; l < 32; ++l)
        if (l >= from) p = Op::combine(p, win[l]);
    } else {
      // No branch: the tiles before `from` are replaced by the right identity, which leaves p's
      // bits as they are, so the loads and the selections stay off the chain. (Guarded, a combine
      // of several instructions compiled to a branch a step with its load inside.)
      V v[32];
#pragma unroll
      for (int l = 0; l < 32; ++l) v[l] = win[l];
#pragma unroll
      for (int l = 0; l < 32; ++l) p = Op::combine(p, l >= from ? v[l] : Op::right_identity());
    }
  }
  if (lane == 0) chain_publish(c, t, kChainInclusive, Op::combine(p, aggregate));
  return p;
}

// Tile t >= 1, called by all 32 lanes of one warp with the tile's aggregate (the same value in
// every lane) and chain_stash_bytes<V>() of shared memory: publishes A_t, looks back, publishes
// P_t = combine(P_{t-1}, A_t) and returns P_{t-1} (in every lane).
template <class Op>
__device__ typename Op::Value chain_look_back(const ChainTiles<typename Op::Value>& c, std::int64_t t,
                                              const typename Op::Value& aggregate, int lane, typename Op::Value* stash) {
  if (lane == 0) chain_publish(c, t, kChainAggregate, aggregate);
  int jl = 0;
  const int w = chain_walk(c, t, 0, lane, stash, jl);
  __syncwarp();
  return chain_fold<Op>(c, t, w, jl, aggregate, lane, stash);
}

// The same, called by every thread of the block (aggregate: warp 0's), found: 8 words of shared
// memory. Warps 0 .. 7 poll a window each at once, so the nearest 256 predecessors cost one round
// trip where one warp walked them 32 at a time; warp 0 walks on alone past them if it must, then
// folds. Returns P_{t-1} in warp 0 (other warps: unspecified).
template <class Op>
__device__ typename Op::Value chain_look_back_block(const ChainTiles<typename Op::Value>& c, std::int64_t t,
                                                    const typename Op::Value& aggregate, int warp, int warps, int lane,
                                                    typename Op::Value* stash, unsigned* found) {
  using V = typename Op::Value;
  const int polling = warps < kChainStashWindows ? warps : kChainStashWindows;
  if (warp == 0 && lane == 0) chain_publish(c, t, kChainAggregate, aggregate);
  if (warp < polling) {
    const unsigned f = chain_poll_window(c, t, warp, lane, stash);
    if (lane == 0) found[warp] = f;
  }
  __syncthreads();
  V p{};
  if (warp == 0) {
    int w = 0, jl = 0;
    unsigned f = found[0];
    while (f == 0 && w + 1 < polling) f = found[++w];
    if (f != 0) jl = 31 - __clz(static_cast<int>(f));
    else w = chain_walk(c, t, polling, lane, stash, jl);
    __syncwarp();
    p = chain_fold<Op>(c, t, w, jl, aggregate, lane, stash);
  }
  return p;
}

}  // namespace sumlab::gpu::detail
