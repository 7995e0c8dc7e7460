#pragma once
// __global__ kernel of gpu_exact: every element, split by bit manipulation into at most three
// 32-bit digits of core/exact_sum.hpp's superaccumulator layout, is added into a per-thread window
// of limbs in registers (core/order_model/exact_digits.hpp), flushed into the block's limbs in
// shared memory with 64-bit integer atomics. Integer addition is exact and associative, so neither
// the launch shape nor the order in which the atomics land can change the limbs: the result is the
// same for every shape and every run. Blocks write their raw limbs and special counts; the host adds
// them with Superaccumulator<T>::add_limb / add_specials and rounds once (gpu/device/dispatch_exact.cu).
//
// Bound on a shared limb (why int64 cannot overflow): each element adds a digit of magnitude
// < 2^32 to any limb, and a block sees fewer than 2^31 elements (validate_shape caps n), so every
// limb stays below 2^63 in magnitude before the host normalises the carries.
#include <cstdint>

#include "core/exact_sum.hpp"
#include "core/float_traits.hpp"
#include "core/order_model/exact_digits.hpp"
#include "gpu/thread/thread_chain.cuh"

namespace sumlab::gpu::detail {

// Per-block special counts, in this order, after the limbs.
enum ExactSpecial { exact_nan = 0, exact_pos_inf = 1, exact_neg_inf = 2, exact_not_negative_zero = 3,
                    exact_specials = 4 };

template <class T> struct ExactLayout {
  static constexpr int num_limbs = Superaccumulator<T>::num_limbs;
  static constexpr int limb_bits = Superaccumulator<T>::limb_bits;
  static_assert(limb_bits == 32, "the digit split below assumes 32-bit limbs");
  static_assert(Superaccumulator<T>::min_exponent == FloatTraits<T>::min_subnormal_exp,
                "limb 0 bit 0 must weigh the smallest subnormal");
};

// One element into the thread's limb window (core/order_model/exact_digits.hpp says why a window),
// whose flushes go to the block's shared limbs as 64-bit atomics; specials are counted directly.
template <class T, int W>
__device__ __forceinline__ void exact_add_element(T x, order_model::ExactLimbWindow<W>& w, unsigned long long* s_limbs,
                                                  unsigned long long* s_special, bool& not_negative_zero) {
  constexpr int L = Superaccumulator<T>::num_limbs;
  const order_model::ExactDigits d = order_model::exact_digits<T>(x);
  if (!d.negative_zero) not_negative_zero = true;
  switch (d.cls) {
    case order_model::ExactClass::zero: return;  // adds nothing (its sign only matters via the flag)
    case order_model::ExactClass::nan: atomicAdd(&s_special[exact_nan], 1ull); return;
    case order_model::ExactClass::pos_inf: atomicAdd(&s_special[exact_pos_inf], 1ull); return;
    case order_model::ExactClass::neg_inf: atomicAdd(&s_special[exact_neg_inf], 1ull); return;
    case order_model::ExactClass::finite: break;
  }
  w.add(d, L, [s_limbs](int limb, long long v) {
    atomicAdd(&s_limbs[limb], static_cast<unsigned long long>(v));  // two's complement: a signed add
  });
}

// d_block_limbs: gridDim.x * num_limbs int64 (as unsigned), d_block_special: gridDim.x * 4 counts.
template <class T, int V>
__global__ void exact_limbs_kernel(const T* __restrict__ d_in, std::int64_t num_items, Mapping mapping,
                                   unsigned long long* d_block_limbs, unsigned long long* d_block_special) {
  constexpr int L = ExactLayout<T>::num_limbs;
  __shared__ unsigned long long s_limbs[L];
  __shared__ unsigned long long s_special[exact_specials];
  for (int k = static_cast<int>(threadIdx.x); k < L; k += static_cast<int>(blockDim.x)) s_limbs[k] = 0;
  if (threadIdx.x < exact_specials) s_special[threadIdx.x] = 0;
  __syncthreads();
  const std::int64_t threads = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t g = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  bool not_negative_zero = false;
  order_model::ExactLimbWindow<8> window;
  for_each_owned<V>(d_in, num_items, g, threads, mapping,
                    [&](T x) { exact_add_element<T, 8>(x, window, s_limbs, s_special, not_negative_zero); });
  unsigned long long* const limbs = s_limbs;
  window.flush(L, [limbs](int limb, long long v) { atomicAdd(&limbs[limb], static_cast<unsigned long long>(v)); });
  if (not_negative_zero) atomicAdd(&s_special[exact_not_negative_zero], 1ull);
  __syncthreads();
  for (int k = static_cast<int>(threadIdx.x); k < L; k += static_cast<int>(blockDim.x))
    d_block_limbs[std::int64_t(blockIdx.x) * L + k] = s_limbs[k];
  if (threadIdx.x < exact_specials)
    d_block_special[std::int64_t(blockIdx.x) * exact_specials + threadIdx.x] = s_special[threadIdx.x];
}

}  // namespace sumlab::gpu::detail
