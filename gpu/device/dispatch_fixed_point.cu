// Host dispatch of gpu_fixed_point.
// Scale from the data (opt.fixed_scale empty): pass 1 is gpu_exact's kernel, also tracking the
// largest finite and smallest nonzero magnitude; its last block derives the scale k from them
// (order_model::fixed_one_pass: core/fixed_point_sum.hpp's rule) on the device. When every element
// sits on the grid 2^-k (always so when the smallest nonzero magnitude is within 2^(62 - p) of the
// largest: 2^38 for float), each q_i = x_i 2^k is exact and the fixed-point result is the exact sum
// rounded once, so pass 1 is the whole sum, in one read of the input, and pass 2's kernel returns
// at once. Otherwise pass 2 (fixed_point_kernel) quantises and adds.
// The caller's scale: fixed_point_kernel alone, one read of the input.
// Either way the host converts the 128-bit total with order_model::fixed_point_from_integer
// (fixed_point_sum's conversion).
#include <cmath>

#include "core/fixed_point_sum.hpp"
#include "core/order_model/fixed_point_model.hpp"
#include "gpu/device/dispatch.cuh"
#include "gpu/device/kernels/exact_kernel.cuh"
#include "gpu/device/kernels/fixed_point_kernels.cuh"

namespace sumlab::gpu::detail {

template <class T>
LaunchOutcome<T> dispatch_fixed_point(const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n,
                                      const KernelOptions& opt) {
  constexpr int L = ExactLayout<T>::num_limbs;
  const bool from_data = !opt.fixed_scale.has_value();
  ExactBuffers exact;
  FixedBuffers fixed;
  long long* d_scale = nullptr;
  Carver c;
  if (from_data) {
    c.add(&exact.block_limbs, static_cast<std::size_t>(s.grid) * L)
        .add(&exact.block_special, static_cast<std::size_t>(s.grid) * exact_specials)
        .add(&exact.limbs, L)
        .add(&exact.special, exact_specials)
        .add(&exact.counter, 1)
        .add(&exact.range, 3)
        .add(&d_scale, 2);
  }
  c.add(&fixed.total, 2)
      .add(&fixed.stats, fixed_stats)
      .add(&fixed.sum, 2)
      .add(&fixed.report, fixed_stats)
      .add(&fixed.counter, 1);
  c.commit();
  exact.scale = d_scale;
  fixed.scale = d_scale;  // nullptr with the caller's scale: the kernel takes k as an argument
  fixed.k = opt.fixed_scale.value_or(0);
  // Then reset by each launch's last block.
  if (from_data) {
    SUMLAB_CUDA_CHECK(cudaMemset(exact.counter, 0, sizeof(unsigned int)));
    SUMLAB_CUDA_CHECK(cudaMemset(exact.range, 0, sizeof(unsigned long long)));
    SUMLAB_CUDA_CHECK(cudaMemset(exact.range + 1, 0xff, 2 * sizeof(unsigned long long)));
  }
  SUMLAB_CUDA_CHECK(cudaMemset(fixed.total, 0, 2 * sizeof(unsigned long long)));
  SUMLAB_CUDA_CHECK(cudaMemset(fixed.stats, 0, fixed_stats * sizeof(unsigned long long)));
  SUMLAB_CUDA_CHECK(cudaMemset(fixed.counter, 0, sizeof(unsigned int)));
  // Blocks over 512 threads need the build with 64 registers; the tiles' shared memory passes the
  // default 48 KB, so the launch opts in to its size.
  auto* const kernel = s.block > 512 ? fixed_point_kernel<T, 1024> : fixed_point_kernel<T, 512>;
  const std::size_t smem = bulk_smem_bytes(s.block);
  SUMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  EventTimer timer;
  timer.start();
  for (int l = 0; l < in.launches; ++l) {
    const T* d_in = in.at(l);
    // Pass 1: the exact sum and the range; its last block decides k and whether pass 2 is needed.
    if (from_data) launch_exact<T, true>(s, d_in, n, exact);
    // Pass 2 returns at once when every element sat on the grid (the decision stays on the device:
    // no copy to the host between the passes).
    kernel<<<s.grid, s.block, smem>>>(d_in, n, fixed);
    SUMLAB_CUDA_CHECK_LAUNCH("fixed_point_kernel");
  }
  LaunchOutcome<T> r;
  r.ms = timer.stop() / in.launches;
  long long scale[2] = {fixed.k, 0};
  if (from_data) SUMLAB_CUDA_CHECK(cudaMemcpy(scale, d_scale, sizeof scale, cudaMemcpyDeviceToHost));
  const long long k = scale[0];
  const bool on_grid = scale[1] != 0;
  FixedPointReport rep;
  rep.scale_exponent = static_cast<int>(k);
  rep.scale_from_data = from_data;
  rep.specials.count = static_cast<std::uint64_t>(n);
  if (on_grid) {
    // Every q_i = x_i 2^k exactly, so S 2^-k is the exact sum: round it once, nothing was lost.
    long long limbs[L];
    unsigned long long special[exact_specials];
    SUMLAB_CUDA_CHECK(cudaMemcpy(limbs, exact.limbs, sizeof limbs, cudaMemcpyDeviceToHost));
    SUMLAB_CUDA_CHECK(cudaMemcpy(special, exact.special, sizeof special, cudaMemcpyDeviceToHost));
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
    unsigned long long total[2], stats[fixed_stats];
    SUMLAB_CUDA_CHECK(cudaMemcpy(total, fixed.sum, sizeof total, cudaMemcpyDeviceToHost));
    SUMLAB_CUDA_CHECK(cudaMemcpy(stats, fixed.report, sizeof stats, cudaMemcpyDeviceToHost));
    const sumlab::detail::uint128 sum = (static_cast<sumlab::detail::uint128>(total[1]) << 64) | total[0];
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

template LaunchOutcome<float> dispatch_fixed_point<float>(const LaunchShape&, const LaunchInputs<float>&, std::int64_t,
                                                          const KernelOptions&);
template LaunchOutcome<double> dispatch_fixed_point<double>(const LaunchShape&, const LaunchInputs<double>&, std::int64_t,
                                                            const KernelOptions&);

}  // namespace sumlab::gpu::detail
