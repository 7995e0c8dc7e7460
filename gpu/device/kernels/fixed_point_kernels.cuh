#pragma once
// __global__ kernel of gpu_fixed_point's quantising pass (core/order_model/fixed_point_model.hpp
// says why its bits equal core/fixed_point_sum.hpp's for every shape):
//   fixed_point_kernel  q_i = RNE(x_i 2^k) (fixed_quantise_group, or the integer steps where that
//                       cannot tell), summed as wrapping 128-bit integers per thread, warp and
//                       block, each block's sum added to the launch's by 64-bit atomics (any
//                       grouping: integer addition is exact), with the quantisation report's counts.
// With the scale from the data it is pass 2, after gpu_exact's kernel with range tracking: it
// decides k from that range, and returns at once when every element sits on the grid 2^-k (pass 1
// was the whole sum; gpu/device/dispatch_fixed_point.cu). With the caller's k it is the whole
// sum, one read of the input.
#include <cstdint>

#include "core/float_traits.hpp"
#include "core/order_model/fixed_point_model.hpp"
#include "gpu/device/kernels/dependent_launch.cuh"
#include "gpu/device/kernels/exact_kernel.cuh"
#include "gpu/thread/bulk_loads.cuh"
#include "gpu/warp/live_lanes.cuh"

namespace sumlab::gpu::detail {

// Counters of the report.
enum FixedStat { fixed_nan = 0, fixed_pos_inf, fixed_neg_inf, fixed_not_negative_zero, fixed_inexact,
                 fixed_saturated, fixed_max_bits_lost, fixed_stats };
// A launch's results: the 128-bit total as order_model::fixed_digits words (the blocks' 32-bit
// digits summed, order_model::fixed_digit), then the counts.
inline constexpr int fixed_set_words = order_model::fixed_digits + fixed_stats;

// Two sets of results, as gpu_exact's (exact_kernel.cuh): a launch adds to set `parity` and its
// block 0 resets the other to 0 for the next launch; no block waits for another.
struct FixedBuffers {
  const unsigned long long* range = nullptr;  // pass 1's range (its set's, exact_range_at); nullptr: the caller's k
  long long* scale = nullptr;                 // with range: block 0 writes (k, on_grid != 0), for the host
  long long k = 0;                            // the caller's k (a kernel argument: no load to wait for)
  unsigned long long* sets = nullptr;         // 2 * fixed_set_words; set 0 is 0 before the first launch
  unsigned parity = 0;                        // the set this launch adds to
};

// Lane 0 of each warp receives op over the warp's lanes that exist. Every shuffle names only
// existing lanes and reads an existing lane (a partial last warp's missing lanes take no part).
// U: a 64-bit word, or unsigned __int128 (shuffled as two words).
template <class U, class Op> __device__ __forceinline__ U warp_reduce_live(U v, Op op) {
  const int live = live_lanes(), lane = static_cast<int>(threadIdx.x & 31u);
  const unsigned mask = live_mask();
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const bool has = lane + off < live;
    const int src = has ? lane + off : lane;
    U o;
    if constexpr (sizeof(U) == 16) {
      const unsigned long long lo = __shfl_sync(mask, static_cast<unsigned long long>(v), src);
      const unsigned long long hi = __shfl_sync(mask, static_cast<unsigned long long>(v >> 64), src);
      o = (static_cast<U>(hi) << 64) | lo;
    } else {
      o = __shfl_sync(mask, v, src);
    }
    if (has) v = op(v, o);
  }
  return v;
}

// Thread 0 receives the block's wrapping 128-bit total. Every thread calls it (it holds a barrier).
__device__ __forceinline__ unsigned __int128 block_sum_u128(unsigned __int128 v, unsigned long long* s_lo,
                                                            unsigned long long* s_hi) {
  v = warp_reduce_live(v, [](unsigned __int128 a, unsigned __int128 b) { return a + b; });
  const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
  if (lane == 0) {
    s_lo[warp] = static_cast<unsigned long long>(v);
    s_hi[warp] = static_cast<unsigned long long>(v >> 64);
  }
  __syncthreads();
  unsigned __int128 total = 0;
  if (threadIdx.x == 0)
    for (int w = 0; w < static_cast<int>(blockDim.x + 31) / 32; ++w)
      total += (static_cast<unsigned __int128>(s_hi[w]) << 64) | s_lo[w];
  return total;
}

// MaxThreads: the instantiation's __launch_bounds__ (512: up to 128 registers; 1024: at most 64,
// for 1024-thread blocks only; with CUDA 13.0 both builds use 62-64 and neither spills).
// The launch provides bulk_smem_bytes(blockDim.x) of dynamic shared memory. The shape's vector width
// and mapping do not matter (integer totals: any order gives the same bits).
template <class T, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads) fixed_point_kernel(const T* __restrict__ d_in, std::int64_t num_items,
                                                                 FixedBuffers out) {
  using Bits = typename FloatTraits<T>::Bits;
  if (blockIdx.x == 0)  // the next launch's set (this launch touches only its own)
    for (int w = static_cast<int>(threadIdx.x); w < fixed_set_words; w += static_cast<int>(blockDim.x))
      out.sets[(out.parity ^ 1u) * fixed_set_words + w] = 0;
  long long k = out.k;
  if (out.range != nullptr) {  // pass 2: the scale from pass 1's range (fixed_point_sum's rule)
    wait_for_prerequisite_grid();  // launched as pass 1's programmatic dependent: pass 1 must end first
    const order_model::FixedOnePass d = order_model::fixed_one_pass<T>(
        static_cast<Bits>(__ldcg(&out.range[0])), static_cast<Bits>(__ldcg(&out.range[1])), decode_grid(__ldcg(&out.range[2])));
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      out.scale[0] = d.k;
      out.scale[1] = d.on_grid ? 1 : 0;
    }
    if (d.on_grid) return;  // pass 1 was the whole sum (every element on the grid)
    k = d.k;
  }
  const T two_k = order_model::fixed_two_k<T>(k);
  const bool fp = two_k != T(0);  // k outside fixed_two_k's range: every group by the integer steps
  __shared__ unsigned long long s_lo[32], s_hi[32], s_stats[fixed_stats];
  for (int c = static_cast<int>(threadIdx.x); c < fixed_stats; c += static_cast<int>(blockDim.x)) s_stats[c] = 0;
  unsigned __int128 sum = 0;
  // The report's counts, as scalars (an array indexed by a runtime value would live in local memory).
  unsigned long long nan = 0, pos_inf = 0, neg_inf = 0, inexact = 0, saturated = 0, max_lost = 0;
  bool not_negative_zero = false;
  // One element by the integer steps, with its counts.
  auto one_element = [&](T x) {
    Bits u;
    memcpy(&u, &x, sizeof(T));
    not_negative_zero |= u != (Bits(1) << (sizeof(Bits) * 8 - 1));
    bool special = false, negative = false;
    const order_model::FixedQuantised q = order_model::fixed_quantise_bits<Bits>(
        u, k, FloatTraits<T>::precision - 1, FloatTraits<T>::exponent_bits, FloatTraits<T>::emax, special, negative);
    if (special) {
      if ((u & ((Bits(1) << (FloatTraits<T>::precision - 1)) - 1)) != 0) ++nan;
      else if (negative) ++neg_inf;
      else ++pos_inf;
      return;
    }
    const unsigned __int128 mag = static_cast<unsigned long long>(q.q);
    sum += negative ? static_cast<unsigned __int128>(0) - mag : mag;
    if (q.bits_lost != 0) {
      ++inexact;
      max_lost = static_cast<unsigned long long>(q.bits_lost) > max_lost ? q.bits_lost : max_lost;
    }
    if (q.saturated) ++saturated;
  };
  // A thread's share of a tile (a group) by the floating-point unit without branches
  // (fixed_quantise_group); only a group holding an element that is not ordinary (lost bits,
  // saturated, NaN/Inf: then it has counts to report) is redone by the integer steps.
  auto group = [&](const T(&x)[bulk_group<T>]) {
    T largest = 0;
    if (fp && order_model::fixed_quantise_group<T>(x, two_k, sum, largest)) {
      if (largest != T(0)) {
        not_negative_zero = true;
      } else {  // every element is +0 or -0
#pragma unroll
        for (int i = 0; i < bulk_group<T>; ++i) not_negative_zero |= !signbit(x[i]);
      }
    } else {
#pragma unroll  // (a runtime index would put x in local memory)
      for (int i = 0; i < bulk_group<T>; ++i) one_element(x[i]);
    }
  };
  // Loads: tiles by the bulk-copy engine (gpu/thread/bulk_loads.cuh). Register loads 64 bytes ahead
  // ran at 0.93 - 0.97 of CUB at 2^30, float32, given k; 128 bytes ahead, an L2 prefetch, cp.async
  // staging and pipelined register loads were slower still (docs/performance-notes.md).
  for_each_bulk_group(d_in, num_items, one_element, group);
  // A block-wide vote, which is also the barrier after s_stats was zeroed (a shared atomicOr per
  // warp instead, 64-bit and so a compare-and-swap loop, cost 0.1-0.4 us a launch at 2^24 floats
  // on an H200).
  const bool block_not_negative_zero = __syncthreads_or(not_negative_zero) != 0;
  // The counts, almost always 0: a vote first, the reductions only when a lane has one.
  const unsigned live = live_mask();
  const bool first_live = static_cast<int>(threadIdx.x & 31u) == __ffs(live) - 1;
  if (__any_sync(live, (nan | pos_inf | neg_inf | inexact | saturated | max_lost) != 0)) {
    const unsigned long long counts[fixed_stats] = {nan, pos_inf, neg_inf, 0, inexact, saturated, max_lost};
#pragma unroll
    for (int c = 0; c < fixed_stats; ++c) {
      if (c == fixed_not_negative_zero) continue;
      const unsigned long long v =
          c == fixed_max_bits_lost
              ? warp_reduce_live(counts[c], [](unsigned long long a, unsigned long long b) { return a > b ? a : b; })
              : warp_reduce_live(counts[c], [](unsigned long long a, unsigned long long b) { return a + b; });
      if (first_live && v != 0) {
        if (c == fixed_max_bits_lost) atomicMax(&s_stats[c], v);
        else atomicAdd(&s_stats[c], v);
      }
    }
  }
  const unsigned __int128 block = block_sum_u128(sum, s_lo, s_hi);  // its barrier also covers s_stats
  if (threadIdx.x != 0) return;
  // The block's sum and counts into the launch's, by atomics whose old values nobody reads.
  unsigned long long* const set = out.sets + out.parity * fixed_set_words;
  for (int d = 0; d < order_model::fixed_digits; ++d) {
    const unsigned long long digit = order_model::fixed_digit(block, d);
    if (digit != 0) atomicAdd(&set[d], digit);
  }
  for (int c = 0; c < fixed_stats; ++c) {
    const unsigned long long v = c == fixed_not_negative_zero ? (block_not_negative_zero ? 1ull : 0ull) : s_stats[c];
    if (v == 0) continue;
    if (c == fixed_max_bits_lost) atomicMax(&set[order_model::fixed_digits + c], v);
    else atomicAdd(&set[order_model::fixed_digits + c], v);
  }
}

}  // namespace sumlab::gpu::detail
