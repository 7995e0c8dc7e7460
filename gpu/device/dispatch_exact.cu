// Host dispatch of gpu_exact (gpu/device/kernels/exact_kernel.cuh): one kernel (a launch per
// exact_launch_elements elements), whose blocks add their limbs to the sum's; the host copies the
// num_limbs totals (88 bytes for float, 544 for double, like any sum's result) and rounds them once
// with core/exact_sum.hpp's Superaccumulator (the same code as the CPU exact sum, so the GPU's bits
// are the CPU's by construction, for every shape and n). exact_into leaves the sum on the device:
// one thread rounds the totals with the same code, and nothing waits. exact_totals brings back the
// exact sum and the exact sum of magnitudes unrounded: a study's reference computed where its data
// lies.

#include <map>
#include <utility>

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

// The sets of exact_into: its own, one pair per device, kept between calls in their reset state
// (the round kernel restores it), so a sum needs no host copy before or after it.
template <class T> const ExactBuffers& resident_sets() {
  int device = 0;
  SUMLAB_CUDA_CHECK(cudaGetDevice(&device));
  static std::map<int, std::pair<DeviceBytes, ExactBuffers>> per_device;
  auto it = per_device.find(device);
  if (it == per_device.end()) {
    DeviceBytes mem(2 * sizeof(unsigned long long) * exact_set_words<T>, "gpu_exact's totals");
    ExactBuffers sets;
    sets.sets = mem.as<unsigned long long>();
    exact_reset_sets<T>(sets);
    it = per_device.emplace(device, std::make_pair(std::move(mem), sets)).first;
  }
  return it->second.second;
}

template <class T> void exact_into(const LaunchShape& s, const T* d_in, std::int64_t n, T* d_out) {
  ExactBuffers sets = resident_sets<T>();
  sets.parity = 0;  // the chunks add to set 0 and reset set 1; the round kernel resets set 0
  launch_exact_chunks<T, false>(s, d_in, n, sets);
  exact_round_kernel<T><<<1, 1>>>(sets, n, d_out);
  SUMLAB_CUDA_CHECK_LAUNCH("exact_round_kernel");
}

// Two sequences of launches on fresh sets: the exact sum (set 0), then the exact sum of magnitudes
// (set 1; the first sequence reset it), each read back as its limbs.
template <class T>
void exact_totals(const LaunchShape& s, const T* d_in, std::int64_t n, Superaccumulator<T>& sum, Superaccumulator<T>& sum_abs) {
  DeviceBytes mem(2 * sizeof(unsigned long long) * exact_set_words<T>, "gpu_exact's totals");
  ExactBuffers sets;
  sets.sets = mem.as<unsigned long long>();
  exact_reset_sets<T>(sets);
  sets.parity = 0;
  launch_exact_chunks<T, false>(s, d_in, n, sets);
  sum = exact_read_accumulator<T>(sets, n);
  sets.parity = 1;
  launch_exact_chunks<T, false, true>(s, d_in, n, sets);
  sum_abs = exact_read_accumulator<T>(sets, n);
}

template void exact_totals<float>(const LaunchShape&, const float*, std::int64_t, Superaccumulator<float>&,
                                  Superaccumulator<float>&);
template void exact_totals<double>(const LaunchShape&, const double*, std::int64_t, Superaccumulator<double>&,
                                   Superaccumulator<double>&);
template void exact_into<float>(const LaunchShape&, const float*, std::int64_t, float*);
template void exact_into<double>(const LaunchShape&, const double*, std::int64_t, double*);
template LaunchOutcome<float> dispatch_exact<float>(const LaunchShape&, const LaunchInputs<float>&, std::int64_t);
template LaunchOutcome<double> dispatch_exact<double>(const LaunchShape&, const LaunchInputs<double>&, std::int64_t);

}  // namespace sumlab::gpu::detail
