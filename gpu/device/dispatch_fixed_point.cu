// Host dispatch of gpu_fixed_point: max pass, scale on the host (core/fixed_point_sum.hpp's rule),
// quantise-and-add pass, then the wrapping 128-bit block sums added and converted on the host with
// core/order_model/fixed_point_model.hpp (fixed_point_sum's conversion).
#include <cstring>
#include <vector>

#include "core/fixed_point_sum.hpp"
#include "core/order_model/fixed_point_model.hpp"
#include "gpu/device/dispatch.cuh"
#include "gpu/device/kernels/fixed_point_kernels.cuh"

namespace sumlab::gpu::detail {
namespace {

template <class T, int V>
void launch(const LaunchShape& s, const T* d_in, std::int64_t n, unsigned long long* d_max, long long* k_out,
            unsigned long long* d_block_sum, unsigned long long* d_stats) {
  max_magnitude_kernel<T, V><<<s.grid, s.block>>>(d_in, n, s.mapping, d_max);
  SUMLAB_CUDA_CHECK_LAUNCH("max_magnitude_kernel");
  const unsigned long long largest_bits = copy_to_host(d_max);
  using Bits = typename FloatTraits<T>::Bits;
  const Bits b = static_cast<Bits>(largest_bits);
  T largest;
  std::memcpy(&largest, &b, sizeof(T));
  const long long k = order_model::fixed_scale_from_largest<T>(largest);
  *k_out = k;
  fixed_point_kernel<T, V><<<s.grid, s.block>>>(d_in, n, s.mapping, k, d_block_sum, d_stats);
  SUMLAB_CUDA_CHECK_LAUNCH("fixed_point_kernel");
}

}  // namespace

template <class T>
LaunchOutcome<T> dispatch_fixed_point(const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n) {
  unsigned long long* d_max = nullptr;
  unsigned long long* d_block_sum = nullptr;
  unsigned long long* d_stats = nullptr;
  Carver c;
  c.add(&d_max, 1).add(&d_block_sum, 2 * static_cast<std::size_t>(s.grid)).add(&d_stats, fixed_stats);
  c.commit();
  long long k = 0;
  EventTimer timer;
  timer.start();
  for (int l = 0; l < in.launches; ++l) {
    // Both zeroed before every launch (timed: part of the sum).
    SUMLAB_CUDA_CHECK(cudaMemsetAsync(d_max, 0, sizeof(unsigned long long)));
    SUMLAB_CUDA_CHECK(cudaMemsetAsync(d_stats, 0, fixed_stats * sizeof(unsigned long long)));
    switch (s.vector) {
      case 1: launch<T, 1>(s, in.at(l), n, d_max, &k, d_block_sum, d_stats); break;
      case 2: launch<T, 2>(s, in.at(l), n, d_max, &k, d_block_sum, d_stats); break;
      case 4: launch<T, 4>(s, in.at(l), n, d_max, &k, d_block_sum, d_stats); break;
      default: throw GpuError("vector width " + std::to_string(s.vector) + " not supported");
    }
  }
  LaunchOutcome<T> r;
  r.ms = timer.stop() / in.launches;  // includes the 8-byte copy of max|x| between the passes
  std::vector<unsigned long long> blocks(2 * static_cast<std::size_t>(s.grid));
  unsigned long long stats[fixed_stats];
  SUMLAB_CUDA_CHECK(cudaMemcpy(blocks.data(), d_block_sum, blocks.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  SUMLAB_CUDA_CHECK(cudaMemcpy(stats, d_stats, sizeof stats, cudaMemcpyDeviceToHost));
  sumlab::detail::uint128 sum = 0;  // wrapping, as the CPU's
  for (int b = 0; b < s.grid; ++b)
    sum += (static_cast<sumlab::detail::uint128>(blocks[2 * std::size_t(b) + 1]) << 64) | blocks[2 * std::size_t(b)];
  FixedPointReport rep;
  rep.scale_exponent = static_cast<int>(k);
  rep.scale_from_data = true;
  rep.specials.count = static_cast<std::uint64_t>(n);
  rep.specials.nan = stats[fixed_nan];
  rep.specials.pos_inf = stats[fixed_pos_inf];
  rep.specials.neg_inf = stats[fixed_neg_inf];
  rep.specials.all_negative_zero = stats[fixed_not_negative_zero] == 0;
  rep.inexact_elements = stats[fixed_inexact];
  rep.saturated_elements = stats[fixed_saturated];
  rep.overflow = stats[fixed_saturated] != 0;
  rep.max_bits_lost = static_cast<int>(stats[fixed_max_bits_lost]);
  r.value = order_model::fixed_point_from_integer<T>(sum, k, rep.specials);
  r.accumulator = static_cast<double>(r.value);
  r.note = fixed_point_detail::describe(rep, !std::isfinite(r.value));
  return r;
}

template LaunchOutcome<float> dispatch_fixed_point<float>(const LaunchShape&, const LaunchInputs<float>&, std::int64_t);
template LaunchOutcome<double> dispatch_fixed_point<double>(const LaunchShape&, const LaunchInputs<double>&, std::int64_t);

}  // namespace sumlab::gpu::detail
