// Host dispatch of gpu_exact (gpu/device/kernels/exact_kernel.cuh): one kernel (a launch per
// exact_launch_elements elements), whose blocks add their limbs to the sum's; the host copies the
// num_limbs totals (88 bytes for float, 544 for double, like any sum's result) and rounds them once
// with core/exact_sum.hpp's Superaccumulator (the same code as the CPU exact sum, so the GPU's bits
// are the CPU's by construction, for every shape and n).

#include "core/exact_sum.hpp"
#include "gpu/device/dispatch.cuh"
#include "gpu/device/kernels/exact_kernel.cuh"

namespace sumlab::gpu::detail {

template <class T>
LaunchOutcome<T> dispatch_exact(const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n) {
  ExactBuffers out;
  Carver c;
  c.add(&out.sets, 2 * static_cast<std::size_t>(exact_set_words<T>));
  c.commit();
  exact_reset_sets<T>(out);  // then each launch resets the next one's set
  EventTimer timer;
  timer.start();
  for (int l = 0; l < in.launches; ++l) {
    out.parity = static_cast<unsigned>(l & 1);
    launch_exact_chunks<T, false>(s, in.at(l), n, out);
  }
  LaunchOutcome<T> r;
  r.ms = timer.stop() / in.launches;
  SpecialCounts specials;
  r.value = exact_read_set<T>(out, n, specials);
  r.accumulator = static_cast<double>(r.value);
  return r;
}

template LaunchOutcome<float> dispatch_exact<float>(const LaunchShape&, const LaunchInputs<float>&, std::int64_t);
template LaunchOutcome<double> dispatch_exact<double>(const LaunchShape&, const LaunchInputs<double>&, std::int64_t);

}  // namespace sumlab::gpu::detail
