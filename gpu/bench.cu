// sumlab bench's timing (gpu/bench.hpp): rotated inputs, a warm-up, event-timed samples of
// back-to-back sums, medians; and the read roof kernel.
#include "gpu/bench.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/sort.h>
#include <thrust/system_error.h>
#include <thrust/transform_reduce.h>

#include "core/float_traits.hpp"
#include "core/metrics.hpp"
#include "core/order_model/fixed_point_model.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device/dispatch.cuh"
#include "gpu/device/entry_site.cuh"
#include "gpu/gpu_sum.hpp"
#include "gpu/thread/thread_chain.cuh"

namespace sumlab::gpu {
namespace {

// Reads every element with 16-byte loads (the trailing partial vector by scalar loads) and folds
// the bits into one word, written only if it equals a value no input gives in practice: the
// loads cannot be removed and nothing is stored.
template <class T>
__global__ void read_kernel(const T* __restrict__ d_in, std::int64_t n, unsigned long long* d_sink) {
  constexpr int V = 16 / int(sizeof(T));
  const std::int64_t threads = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t g = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned long long fold = 0;
  detail::for_each_owned<V>(d_in, n, g, threads, Mapping::grid_stride, [&fold](T x) {
    typename FloatTraits<T>::Bits b;
    memcpy(&b, &x, sizeof(T));
    fold ^= b;
  });
  if (fold == 0x9e3779b97f4a7c15ull) *d_sink = fold;
}

// The bits of |x| for a finite x, 0 for NaN and Inf (finite magnitudes' bits order like their values).
template <class T> struct FiniteMagnitude {
  using Bits = typename FloatTraits<T>::Bits;
  __host__ __device__ Bits operator()(Bits u) const {
    const Bits a = u & (~Bits(0) >> 1);
    return (a >> (FloatTraits<T>::precision - 1)) == (Bits(1) << FloatTraits<T>::exponent_bits) - 1 ? Bits(0) : a;
  }
};

// Warm-up, calibration, samples: run(launches) enqueues `launches` sums, the l-th over input copy
// l mod copies, and returns their LaunchOutcome (ms = the mean per sum; value = the last sum's).
// check_launches > 0 (a kernel that gives the same bits every run): one more sequence of that many
// launches, copies + 1 so that its last sum is over copy 0 again, must end with the warm-up's
// bits; a launch that leaves state behind for the next (a counter or a total it failed to reset)
// makes the measurement an error, not a timing.
template <class T, class Run> Timing sample(Run&& run, const TimingOptions& o, int check_launches) {
  Timing t;
  const detail::LaunchOutcome<T> warm = run(1);
  t.value = static_cast<double>(warm.value);
  t.value_hex = hex_bits(warm.value);
  // The launch count from a second single sum (a first one's one-off costs gave some cells 4
  // launches where their neighbours had over 100).
  t.launches = detail::operations_per_sample(run(1).ms, o.target_sample_ms, o.max_launches);
  std::vector<double> ms;
  for (int i = 0; i < std::max(1, o.samples); ++i) ms.push_back(run(t.launches).ms);
  if (check_launches > 0) {
    const std::string again = hex_bits(run(check_launches).value);
    if (again != t.value_hex) {
      t.error = "repeated launches changed the result: " + t.value_hex + " after one launch, " + again + " after " +
                std::to_string(check_launches) + " over the same input (a launch left state behind for the next)";
      return t;
    }
  }
  t.samples = static_cast<int>(ms.size());
  t.ms = median(ms);
  t.ms_min = *std::min_element(ms.begin(), ms.end());
  t.ms_max = *std::max_element(ms.begin(), ms.end());
  return t;
}

}  // namespace

template <class T>
BenchInput<T>::BenchInput(std::int64_t n, const DistributionSpec& spec, std::uint64_t seed, std::size_t min_total_bytes,
                          Ordering order)
    : n_(n) {
  if (n < 0) throw GpuError("bench input: n must be >= 0");
  std::string why;
  if (!gpu_available(&why)) throw GpuError(why);
  if (min_total_bytes == 0) min_total_bytes = 4 * detail::l2_cache_bytes();
  stride_ = std::max<std::int64_t>(64, (n + 63) / 64 * 64);
  const std::size_t copy_bytes = static_cast<std::size_t>(stride_) * sizeof(T);
  copies_ = static_cast<int>(std::clamp<std::size_t>((min_total_bytes + copy_bytes - 1) / copy_bytes, 1, 4096));
  buffer_ = DeviceBuffer<T>(stride_ * copies_);
  fill(buffer_, spec, seed);
  if (order == Ordering::as_generated || n < 2) return;
  try {
    for (int c = 0; c < copies_; ++c) {
      T* const first = buffer_.device_data() + std::int64_t(c) * stride_;
      thrust::stable_sort(thrust::device, first, first + n, OrderLess<T>{order});
    }
  } catch (const thrust::system_error& e) {
    throw GpuError(std::string("bench input: sorting a copy on the device: ") + e.what());
  }
  SUMLAB_CUDA_CHECK(cudaDeviceSynchronize());
}

template <class T>
Timing time_sum(GpuKernel k, const LaunchShape& shape, const BenchInput<T>& input, const TimingOptions& o,
                const KernelOptions& opt) {
  const LaunchShape s = canonicalize(k, shape);
  Timing t;
  t.error = validate_options(k, opt);
  if (t.error.empty()) t.error = validate_shape(k, s, FloatTraits<T>::dtype, input.n());
  if (!t.error.empty()) return t;
  detail::LaunchInputs<T> in;
  in.base = input.buffer().device_data();
  in.stride = input.stride();
  in.copies = input.copies();
  try {
    t = sample<T>([&](int launches) {
      in.launches = launches;
      return detail::dispatch<T>(k, s, in, input.n(), opt);
    }, o, info(k).determinism != Determinism::not_deterministic ? input.copies() + 1 : 0);
  } catch (const GpuError& e) {
    t = Timing{};
    t.error = e.what();
  }
  return t;
}

template <class T>
Timing time_device_entry(const DeviceEntry<T>& entry, std::size_t scratch_bytes, const BenchInput<T>& input,
                         const TimingOptions& o, bool check_repeats) {
  detail::EntrySite& site = detail::EntrySite::get();
  const auto lock = site.lock();
  Timing t;
  try {
    void* d_scratch = site.scratch(scratch_bytes);
    detail::EventTimer timer;
    t = sample<T>([&](int launches) {
      detail::LaunchOutcome<T> r;
      site.poison_result<T>();
      timer.start(site.stream());
      for (int l = 0; l < launches; ++l) {
        const T* d_in = input.buffer().device_data() + std::int64_t(l % input.copies()) * input.stride();
        site.enqueue<T>(entry, d_in, static_cast<std::size_t>(input.n()), d_scratch);
      }
      r.ms = timer.stop(site.stream()) / launches;
      site.finish();
      r.value = site.value<T>();
      return r;
    }, o, check_repeats ? input.copies() + 1 : 0);
  } catch (const GpuError& e) {
    site.drain();
    t = Timing{};
    t.error = e.what();
  }
  return t;
}

template <class T> int data_scale(const BenchInput<T>& in) {
  using Bits = typename FloatTraits<T>::Bits;
  const Bits* bits = reinterpret_cast<const Bits*>(in.buffer().device_data());
  const Bits largest = thrust::transform_reduce(
      thrust::device, bits, bits + in.n(),
      FiniteMagnitude<T>{}, Bits(0), thrust::maximum<Bits>());
  SUMLAB_CUDA_CHECK(cudaGetLastError());
  return static_cast<int>(order_model::fixed_one_pass<T>(largest, ~Bits(0)).k);  // fixed_point_sum's rule
}

template <class T> Timing time_read(const BenchInput<T>& input, const TimingOptions& o, std::int64_t elements) {
  Timing best;
  try {
    const std::int64_t n = elements < 0 ? input.n() : std::min(elements, input.n());
    int sms = 0;
    SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    unsigned long long* d_sink = nullptr;
    detail::Carver c;
    c.add(&d_sink, 1);
    c.commit();
    for (const int per_sm : {2, 4, 8, 16}) {
      for (const int block : {256, 512, 1024}) {
        if (per_sm * block > 2048) continue;  // more than one SM holds
        const Timing t = sample<T>([&](int launches) {
          detail::LaunchOutcome<T> r;
          detail::EventTimer timer;
          timer.start();
          for (int l = 0; l < launches; ++l) {
            const T* d_in = input.buffer().device_data() + std::int64_t(l % input.copies()) * input.stride();
            read_kernel<T><<<sms * per_sm, block>>>(d_in, n, d_sink);
            SUMLAB_CUDA_CHECK_LAUNCH("read_kernel");
          }
          r.ms = timer.stop() / launches;
          return r;
        }, o, 0);
        if (best.samples == 0 || t.ms < best.ms) best = t;
      }
    }
    best.value_hex.clear();
  } catch (const GpuError& e) {
    best = Timing{};
    best.error = e.what();
  }
  return best;
}

template class BenchInput<float>;
template class BenchInput<double>;
template Timing time_sum<float>(GpuKernel, const LaunchShape&, const BenchInput<float>&, const TimingOptions&,
                                const KernelOptions&);
template Timing time_sum<double>(GpuKernel, const LaunchShape&, const BenchInput<double>&, const TimingOptions&,
                                 const KernelOptions&);
template Timing time_device_entry<float>(const DeviceEntry<float>&, std::size_t, const BenchInput<float>&,
                                         const TimingOptions&, bool);
template Timing time_device_entry<double>(const DeviceEntry<double>&, std::size_t, const BenchInput<double>&,
                                          const TimingOptions&, bool);
template int data_scale<float>(const BenchInput<float>&);
template int data_scale<double>(const BenchInput<double>&);
template Timing time_read<float>(const BenchInput<float>&, const TimingOptions&, std::int64_t);
template Timing time_read<double>(const BenchInput<double>&, const TimingOptions&, std::int64_t);

}  // namespace sumlab::gpu
