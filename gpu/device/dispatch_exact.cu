// Host dispatch of gpu_exact: per-block integer limbs from the kernel, merged and rounded once on
// the host by core/exact_sum.hpp's Superaccumulator (the same code as the CPU exact sum, so the
// GPU's bits are the CPU's by construction, for every shape).
#include <vector>

#include "core/exact_sum.hpp"
#include "gpu/device/dispatch.cuh"
#include "gpu/device/kernels/exact_kernel.cuh"

namespace sumlab::gpu::detail {

template <class T>
LaunchOutcome<T> dispatch_exact(const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n) {
  constexpr int L = ExactLayout<T>::num_limbs;
  unsigned long long* d_limbs = nullptr;
  unsigned long long* d_special = nullptr;
  Carver c;
  c.add(&d_limbs, static_cast<std::size_t>(s.grid) * L).add(&d_special, static_cast<std::size_t>(s.grid) * exact_specials);
  c.commit();
  EventTimer timer;
  timer.start();
  for (int l = 0; l < in.launches; ++l) {
    const T* d_in = in.at(l);
    switch (s.vector) {
      case 1: exact_limbs_kernel<T, 1><<<s.grid, s.block>>>(d_in, n, s.mapping, d_limbs, d_special); break;
      case 2: exact_limbs_kernel<T, 2><<<s.grid, s.block>>>(d_in, n, s.mapping, d_limbs, d_special); break;
      case 4: exact_limbs_kernel<T, 4><<<s.grid, s.block>>>(d_in, n, s.mapping, d_limbs, d_special); break;
      default: throw GpuError("vector width " + std::to_string(s.vector) + " not supported");
    }
    SUMLAB_CUDA_CHECK_LAUNCH("exact_limbs_kernel");
  }
  LaunchOutcome<T> r;
  r.ms = timer.stop() / in.launches;
  std::vector<unsigned long long> limbs(static_cast<std::size_t>(s.grid) * L);
  std::vector<unsigned long long> special(static_cast<std::size_t>(s.grid) * exact_specials);
  SUMLAB_CUDA_CHECK(cudaMemcpy(limbs.data(), d_limbs, limbs.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  SUMLAB_CUDA_CHECK(cudaMemcpy(special.data(), d_special, special.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));

  Superaccumulator<T> acc;
  SpecialCounts sc;
  sc.count = static_cast<std::uint64_t>(n);
  for (int b = 0; b < s.grid; ++b) {
    for (int k = 0; k < L; ++k) {
      const auto v = static_cast<std::int64_t>(limbs[static_cast<std::size_t>(b) * L + k]);
      if (v != 0) acc.add_limb(k, v);
    }
    const unsigned long long* sp = &special[static_cast<std::size_t>(b) * exact_specials];
    sc.nan += sp[exact_nan];
    sc.pos_inf += sp[exact_pos_inf];
    sc.neg_inf += sp[exact_neg_inf];
    if (sp[exact_not_negative_zero] != 0) sc.all_negative_zero = false;
  }
  acc.add_specials(sc);
  r.value = acc.round();
  r.accumulator = static_cast<double>(r.value);
  return r;
}

template LaunchOutcome<float> dispatch_exact<float>(const LaunchShape&, const LaunchInputs<float>&, std::int64_t);
template LaunchOutcome<double> dispatch_exact<double>(const LaunchShape&, const LaunchInputs<double>&, std::int64_t);

}  // namespace sumlab::gpu::detail
