// Host dispatch of gpu_exact (gpu/device/kernels/exact_kernel.cuh): one kernel, whose last block
// sums the blocks' limbs; the host copies the num_limbs totals (88 bytes for float, 544 for
// double, like any sum's result) and rounds them once with core/exact_sum.hpp's Superaccumulator
// (the same code as the CPU exact sum, so the GPU's bits are the CPU's by construction, for every
// shape).

#include "core/exact_sum.hpp"
#include "gpu/device/dispatch.cuh"
#include "gpu/device/kernels/exact_kernel.cuh"

namespace sumlab::gpu::detail {

template <class T>
LaunchOutcome<T> dispatch_exact(const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n) {
  constexpr int L = ExactLayout<T>::num_limbs;
  ExactBuffers out;
  Carver c;
  c.add(&out.block_limbs, static_cast<std::size_t>(s.grid) * L)
      .add(&out.block_special, static_cast<std::size_t>(s.grid) * exact_specials)
      .add(&out.limbs, L)
      .add(&out.special, exact_specials)
      .add(&out.counter, 1);
  c.commit();
  SUMLAB_CUDA_CHECK(cudaMemset(out.counter, 0, sizeof(unsigned int)));  // then reset by each last block
  EventTimer timer;
  timer.start();
  for (int l = 0; l < in.launches; ++l) launch_exact<T, false>(s, in.at(l), n, out);
  LaunchOutcome<T> r;
  r.ms = timer.stop() / in.launches;
  long long limbs[L];
  unsigned long long special[exact_specials];
  SUMLAB_CUDA_CHECK(cudaMemcpy(limbs, out.limbs, sizeof limbs, cudaMemcpyDeviceToHost));
  SUMLAB_CUDA_CHECK(cudaMemcpy(special, out.special, sizeof special, cudaMemcpyDeviceToHost));
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
