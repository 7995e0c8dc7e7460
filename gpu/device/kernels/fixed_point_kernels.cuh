#pragma once
// __global__ kernels of gpu_fixed_point (core/order_model/fixed_point_model.hpp says why its bits
// equal core/fixed_point_sum.hpp's for every shape):
// (the largest finite |x|, which sets the scale, comes from gpu_exact's kernel run with range
// tracking: gpu/device/dispatch_fixed_point.cu)
//   fixed_point_kernel    q_i = RNE(x_i 2^k) (fixed_quantise), summed as wrapping 128-bit integers
//                         per thread, warp and block (any grouping: integer addition is exact),
//                         with the quantisation report's counts.
#include <cstdint>

#include "core/float_traits.hpp"
#include "core/order_model/fixed_point_model.hpp"
#include "gpu/thread/thread_chain.cuh"

namespace sumlab::gpu::detail {

// Counters of the report, in d_stats.
enum FixedStat { fixed_nan = 0, fixed_pos_inf, fixed_neg_inf, fixed_not_negative_zero, fixed_inexact,
                 fixed_saturated, fixed_max_bits_lost, fixed_stats };

__device__ __forceinline__ unsigned long long warp_max_u64(unsigned long long v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const unsigned long long o = __shfl_xor_sync(0xffffffffu, v, off);
    v = o > v ? o : v;
  }
  return v;
}
__device__ __forceinline__ unsigned long long warp_sum_u64(unsigned long long v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}
__device__ __forceinline__ unsigned __int128 warp_sum_u128(unsigned __int128 v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const unsigned long long lo = __shfl_xor_sync(0xffffffffu, static_cast<unsigned long long>(v), off);
    const unsigned long long hi = __shfl_xor_sync(0xffffffffu, static_cast<unsigned long long>(v >> 64), off);
    v += (static_cast<unsigned __int128>(hi) << 64) | lo;
  }
  return v;
}

// d_scale: (k, on_grid) from pass 1's last block. d_block_sum: 2 words per block (low, high 64 bits of the block's wrapping 128-bit sum).
template <class T, int V>
__global__ void fixed_point_kernel(const T* __restrict__ d_in, std::int64_t num_items, Mapping mapping,
                                   const long long* d_scale, unsigned long long* d_block_sum,
                                   unsigned long long* d_stats) {
  using Bits = typename FloatTraits<T>::Bits;
  if (d_scale[1] != 0) return;  // pass 1 was the whole sum (every element on the grid)
  const long long scale_exponent = d_scale[0];
  __shared__ unsigned long long s_lo[32], s_hi[32];
  const std::int64_t threads = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t g = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned __int128 sum = 0;
  unsigned long long counts[fixed_stats] = {};
  int max_lost = 0;
  for_each_owned<V>(d_in, num_items, g, threads, mapping, [&](T x) {
    Bits u;
    memcpy(&u, &x, sizeof(T));
    if (u != (Bits(1) << (sizeof(Bits) * 8 - 1))) counts[fixed_not_negative_zero] = 1;
    bool special = false, negative = false;
    const order_model::FixedQuantised q = order_model::fixed_quantise_bits<Bits>(
        u, scale_exponent, FloatTraits<T>::precision - 1, FloatTraits<T>::exponent_bits, FloatTraits<T>::emax,
        special, negative);
    if (special) {
      const bool nan = (u & ((Bits(1) << (FloatTraits<T>::precision - 1)) - 1)) != 0;
      ++counts[nan ? fixed_nan : (negative ? fixed_neg_inf : fixed_pos_inf)];
      return;
    }
    const unsigned __int128 mag = static_cast<unsigned long long>(q.q);
    sum += negative ? static_cast<unsigned __int128>(0) - mag : mag;
    if (q.bits_lost != 0) {
      ++counts[fixed_inexact];
      max_lost = q.bits_lost > max_lost ? q.bits_lost : max_lost;
    }
    if (q.saturated) ++counts[fixed_saturated];
  });
  sum = warp_sum_u128(sum);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    s_lo[warp] = static_cast<unsigned long long>(sum);
    s_hi[warp] = static_cast<unsigned long long>(sum >> 64);
  }
#pragma unroll
  for (int c = 0; c < fixed_stats; ++c) {
    if (c == fixed_max_bits_lost) continue;
    const unsigned long long total = warp_sum_u64(counts[c]);
    if (lane == 0 && total != 0) atomicAdd(&d_stats[c], total);
  }
  const unsigned long long lost = warp_max_u64(static_cast<unsigned long long>(max_lost));
  if (lane == 0 && lost != 0) atomicMax(&d_stats[fixed_max_bits_lost], lost);
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned __int128 block = 0;
    for (int w = 0; w < static_cast<int>(blockDim.x + 31) / 32; ++w)
      block += (static_cast<unsigned __int128>(s_hi[w]) << 64) | s_lo[w];
    d_block_sum[2 * std::int64_t(blockIdx.x)] = static_cast<unsigned long long>(block);
    d_block_sum[2 * std::int64_t(blockIdx.x) + 1] = static_cast<unsigned long long>(block >> 64);
  }
}

}  // namespace sumlab::gpu::detail
