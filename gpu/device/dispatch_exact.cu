// Host dispatch of gpu_exact (gpu/device/kernels/exact_kernel.cuh): the limbs kernel, then the
// merge kernel's column sums; the host copies the num_limbs totals (88 bytes for float, 544 for
// double, like any sum's result) and rounds them once with core/exact_sum.hpp's Superaccumulator
// (the same code as the CPU exact sum, so the GPU's bits are the CPU's by construction, for every
// shape).
#include <vector>

#include "core/exact_sum.hpp"
#include "gpu/device/dispatch.cuh"
#include "gpu/device/kernels/exact_kernel.cuh"

namespace sumlab::gpu::detail {

template <class T>
LaunchOutcome<T> dispatch_exact(const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n) {
  constexpr int L = ExactLayout<T>::num_limbs;
  long long* d_block_limbs = nullptr;
  unsigned long long* d_block_special = nullptr;
  long long* d_limbs = nullptr;
  unsigned long long* d_special = nullptr;
  Carver c;
  c.add(&d_block_limbs, static_cast<std::size_t>(s.grid) * L)
      .add(&d_block_special, static_cast<std::size_t>(s.grid) * exact_specials)
      .add(&d_limbs, L)
      .add(&d_special, exact_specials);
  c.commit();
  EventTimer timer;
  timer.start();
  for (int l = 0; l < in.launches; ++l) {
    launch_exact<T, false>(s, in.at(l), n, d_block_limbs, d_block_special, d_limbs, d_special, nullptr);
  }
  LaunchOutcome<T> r;
  r.ms = timer.stop() / in.launches;
  long long limbs[L];
  unsigned long long special[exact_specials];
  SUMLAB_CUDA_CHECK(cudaMemcpy(limbs, d_limbs, sizeof limbs, cudaMemcpyDeviceToHost));
  SUMLAB_CUDA_CHECK(cudaMemcpy(special, d_special, sizeof special, cudaMemcpyDeviceToHost));
  Superaccumulator<T> acc;
  for (int k = 0; k < L; ++k)
    if (limbs[k] != 0) acc.add_limb(k, limbs[k]);
  SpecialCounts sc;
  sc.count = static_cast<std::uint64_t>(n);
  sc.nan = special[exact_nan];
  sc.pos_inf = special[exact_pos_inf];
  sc.neg_inf = special[exact_neg_inf];
  sc.all_negative_zero = special[exact_not_negative_zero] == 0;
  acc.add_specials(sc);
  r.value = acc.round();
  r.accumulator = static_cast<double>(r.value);
  return r;
}

template LaunchOutcome<float> dispatch_exact<float>(const LaunchShape&, const LaunchInputs<float>&, std::int64_t);
template LaunchOutcome<double> dispatch_exact<double>(const LaunchShape&, const LaunchInputs<double>&, std::int64_t);

}  // namespace sumlab::gpu::detail
