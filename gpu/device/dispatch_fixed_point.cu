// Host dispatch of gpu_fixed_point. Pass 1 is gpu_exact's kernel, also tracking the largest finite
// and smallest nonzero magnitude; the host derives the scale k from the largest (core/fixed_point_sum.hpp's
// rule). When every element sits on the grid 2^-k (always so when the smallest nonzero magnitude
// is within 2^(62 - p) of the largest: 2^38 for float), each q_i = x_i 2^k is exact and the
// fixed-point result is the exact sum rounded once, so pass 1 is the whole sum, in one read of the
// input. Otherwise pass 2 quantises and adds (the wrapping 128-bit block sums added and converted
// on the host with core/order_model/fixed_point_model.hpp, fixed_point_sum's conversion).
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/fixed_point_sum.hpp"
#include "core/order_model/fixed_point_model.hpp"
#include "gpu/device/dispatch.cuh"
#include "gpu/device/kernels/exact_kernel.cuh"
#include "gpu/device/kernels/fixed_point_kernels.cuh"

namespace sumlab::gpu::detail {

template <class T>
LaunchOutcome<T> dispatch_fixed_point(const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n) {
  constexpr int L = ExactLayout<T>::num_limbs;
  long long* d_block_limbs = nullptr;
  unsigned long long* d_block_special = nullptr;
  long long* d_limbs = nullptr;
  unsigned long long* d_special = nullptr;
  unsigned long long* d_range = nullptr;
  unsigned long long* d_block_sum = nullptr;
  unsigned long long* d_stats = nullptr;
  Carver c;
  c.add(&d_block_limbs, static_cast<std::size_t>(s.grid) * L)
      .add(&d_block_special, static_cast<std::size_t>(s.grid) * exact_specials)
      .add(&d_limbs, L)
      .add(&d_special, exact_specials)
      .add(&d_range, 2)
      .add(&d_block_sum, 2 * static_cast<std::size_t>(s.grid))
      .add(&d_stats, fixed_stats);
  c.commit();
  long long k = 0;
  bool on_grid = true;
  EventTimer timer;
  timer.start();
  for (int l = 0; l < in.launches; ++l) {
    const T* d_in = in.at(l);
    // Pass 1: the exact sum and the range (largest finite, smallest nonzero magnitude).
    SUMLAB_CUDA_CHECK(cudaMemsetAsync(d_range, 0, sizeof(unsigned long long)));
    SUMLAB_CUDA_CHECK(cudaMemsetAsync(d_range + 1, 0xff, sizeof(unsigned long long)));
    launch_exact<T, true>(s, d_in, n, d_block_limbs, d_block_special, d_limbs, d_special, d_range);
    unsigned long long range[2];
    SUMLAB_CUDA_CHECK(cudaMemcpy(range, d_range, sizeof range, cudaMemcpyDeviceToHost));
    using Bits = typename FloatTraits<T>::Bits;
    const T largest = std::bit_cast<T>(static_cast<Bits>(range[0]));
    k = order_model::fixed_scale_from_largest<T>(largest);
    // Every element on the grid 2^-k: the smallest nonzero one's lowest bit is at least
    // 2^(ilogb(smallest) - (p - 1)), and every larger element's lowest bit is no lower.
    on_grid = range[0] == 0 ||
              std::ilogb(std::bit_cast<T>(static_cast<Bits>(range[1]))) - (FloatTraits<T>::precision - 1) >= -k;
    if (on_grid) continue;
    // Pass 2, only for inputs that do not all sit on the grid: quantise and add.
    SUMLAB_CUDA_CHECK(cudaMemsetAsync(d_stats, 0, fixed_stats * sizeof(unsigned long long)));
    switch (s.vector) {
      case 1: fixed_point_kernel<T, 1><<<s.grid, s.block>>>(d_in, n, s.mapping, k, d_block_sum, d_stats); break;
      case 2: fixed_point_kernel<T, 2><<<s.grid, s.block>>>(d_in, n, s.mapping, k, d_block_sum, d_stats); break;
      case 4: fixed_point_kernel<T, 4><<<s.grid, s.block>>>(d_in, n, s.mapping, k, d_block_sum, d_stats); break;
      default: throw GpuError("vector width " + std::to_string(s.vector) + " not supported");
    }
    SUMLAB_CUDA_CHECK_LAUNCH("fixed_point_kernel");
  }
  LaunchOutcome<T> r;
  r.ms = timer.stop() / in.launches;  // includes the 16-byte copy of the range between the passes
  FixedPointReport rep;
  rep.scale_exponent = static_cast<int>(k);
  rep.scale_from_data = true;
  rep.specials.count = static_cast<std::uint64_t>(n);
  if (on_grid) {
    // Every q_i = x_i 2^k exactly, so S 2^-k is the exact sum: round it once, nothing was lost.
    long long limbs[L];
    unsigned long long special[exact_specials];
    SUMLAB_CUDA_CHECK(cudaMemcpy(limbs, d_limbs, sizeof limbs, cudaMemcpyDeviceToHost));
    SUMLAB_CUDA_CHECK(cudaMemcpy(special, d_special, sizeof special, cudaMemcpyDeviceToHost));
    rep.specials.nan = special[exact_nan];
    rep.specials.pos_inf = special[exact_pos_inf];
    rep.specials.neg_inf = special[exact_neg_inf];
    rep.specials.all_negative_zero = special[exact_not_negative_zero] == 0;
    Superaccumulator<T> acc;
    for (int j = 0; j < L; ++j)
      if (limbs[j] != 0) acc.add_limb(j, limbs[j]);
    acc.add_specials(rep.specials);
    r.value = acc.round();
  } else {
    std::vector<unsigned long long> blocks(2 * static_cast<std::size_t>(s.grid));
    unsigned long long stats[fixed_stats];
    SUMLAB_CUDA_CHECK(cudaMemcpy(blocks.data(), d_block_sum, blocks.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    SUMLAB_CUDA_CHECK(cudaMemcpy(stats, d_stats, sizeof stats, cudaMemcpyDeviceToHost));
    sumlab::detail::uint128 sum = 0;  // wrapping, as the CPU's
    for (int b = 0; b < s.grid; ++b)
      sum += (static_cast<sumlab::detail::uint128>(blocks[2 * std::size_t(b) + 1]) << 64) | blocks[2 * std::size_t(b)];
    rep.specials.nan = stats[fixed_nan];
    rep.specials.pos_inf = stats[fixed_pos_inf];
    rep.specials.neg_inf = stats[fixed_neg_inf];
    rep.specials.all_negative_zero = stats[fixed_not_negative_zero] == 0;
    rep.inexact_elements = stats[fixed_inexact];
    rep.saturated_elements = stats[fixed_saturated];
    rep.overflow = stats[fixed_saturated] != 0;
    rep.max_bits_lost = static_cast<int>(stats[fixed_max_bits_lost]);
    r.value = order_model::fixed_point_from_integer<T>(sum, k, rep.specials);
  }
  r.accumulator = static_cast<double>(r.value);
  r.note = fixed_point_detail::describe(rep, !std::isfinite(r.value));
  return r;
}

template LaunchOutcome<float> dispatch_fixed_point<float>(const LaunchShape&, const LaunchInputs<float>&, std::int64_t);
template LaunchOutcome<double> dispatch_fixed_point<double>(const LaunchShape&, const LaunchInputs<double>&, std::int64_t);

}  // namespace sumlab::gpu::detail
