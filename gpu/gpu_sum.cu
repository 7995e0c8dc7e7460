// Public entry points of gpu/: device queries and gpu_sum(), which validates the request, picks the
// family's launcher and turns any GpuError (CUDA failures carry file:line) into a returned error.
#include "gpu/gpu_sum.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/float_traits.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device/dispatch.cuh"

namespace sumlab::gpu {

bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    // Without an NVIDIA driver the runtime reports an "insufficient" one: say what it means.
    const std::string cause = e == cudaErrorInsufficientDriver
                                  ? "no NVIDIA driver that this CUDA runtime can use (none installed, or too old)"
                                  : std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
    if (why) *why = "no CUDA device: " + cause;
    return false;
  }
  if (count == 0) {
    if (why) *why = "no CUDA device: the driver reports 0 devices";
    return false;
  }
  return true;
}

namespace {
std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }
}  // namespace

DeviceInfo device_info() {
  std::string why;
  if (!gpu_available(&why)) throw GpuError(why);
  cudaDeviceProp p{};
  SUMLAB_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  DeviceInfo d;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.l2_bytes = p.l2CacheSize;
  SUMLAB_CUDA_CHECK(cudaMemGetInfo(&d.free_memory, &d.total_memory));
  int v = 0;
  SUMLAB_CUDA_CHECK(cudaDriverGetVersion(&v));
  d.driver_version = cuda_version_text(v);
  SUMLAB_CUDA_CHECK(cudaRuntimeGetVersion(&v));
  d.runtime_version = cuda_version_text(v);
  return d;
}

namespace detail {
template <class T>
LaunchOutcome<T> dispatch(GpuKernel k, const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n, const KernelOptions& opt) {
  switch (info(k).family) {
    case KernelFamily::shuffle: return dispatch_shuffle<T>(k, s, in, n);
    case KernelFamily::serial:
    case KernelFamily::classic:
    case KernelFamily::multi_add: return dispatch_classic<T>(k, s, in, n);
    case KernelFamily::integer:
      return k == GpuKernel::exact ? dispatch_exact<T>(s, in, n) : dispatch_fixed_point<T>(s, in, n, opt);
    case KernelFamily::library: return dispatch_library<T>(k, in, n);
  }

  throw GpuError("dispatch: unknown kernel");
}
template LaunchOutcome<float> dispatch<float>(GpuKernel, const LaunchShape&, const LaunchInputs<float>&, std::int64_t,
                                              const KernelOptions&);
template LaunchOutcome<double> dispatch<double>(GpuKernel, const LaunchShape&, const LaunchInputs<double>&, std::int64_t,
                                                const KernelOptions&);
}  // namespace detail

template <class T>
GpuSumResult<T> gpu_sum(GpuKernel k, const LaunchShape& shape, const DeviceBuffer<T>& input, const KernelOptions& opt) {
  GpuSumResult<T> r;
  const std::int64_t n = input.size();
  const LaunchShape s = canonicalize(k, shape);
  r.error = validate_options(k, opt);
  if (r.error.empty()) r.error = validate_shape(k, s, FloatTraits<T>::dtype, n);
  if (!r.error.empty()) return r;
  const std::uintptr_t addr = reinterpret_cast<std::uintptr_t>(input.device_data());
  if ((info(k).shape_fields & field_vector) && addr % (static_cast<std::uintptr_t>(s.vector) * sizeof(T)) != 0) {
    r.error = "vector width " + std::to_string(s.vector) + " needs the input aligned to " +
              std::to_string(s.vector * sizeof(T)) + " bytes; this buffer is not";
    return r;
  }
  std::string why;
  if (!gpu_available(&why)) {
    r.error = why;
    return r;
  }
  try {
    detail::LaunchInputs<T> in;
    in.base = input.device_data();
    const detail::LaunchOutcome<T> o = detail::dispatch<T>(k, s, in, n, opt);
    r.value = o.value;
    r.accumulator = o.accumulator;
    r.ms = o.ms;
    r.note = o.note;
    r.quantisation = o.quantisation;
    r.input_reads = o.input_reads;
  } catch (const GpuError& e) {
    r.error = e.what();
  }
  return r;
}

template <class T>
GpuSumResult<T> gpu_sum(GpuKernel k, const LaunchShape& s, std::span<const T> host_input, const KernelOptions& opt) {
  try {
    DeviceBuffer<T> buf(static_cast<std::int64_t>(host_input.size()));
    buf.upload(host_input);
    return gpu_sum<T>(k, s, buf, opt);
  } catch (const GpuError& e) {
    GpuSumResult<T> r;
    r.error = e.what();
    return r;
  }
}

template <class T> std::string gpu_exact_into(const T* d_in, std::int64_t n, T* d_out, const LaunchShape& shape) {
  const LaunchShape s = canonicalize(GpuKernel::exact, shape);
  if (std::string why = validate_shape(GpuKernel::exact, s, FloatTraits<T>::dtype, n); !why.empty()) return why;
  if (!d_out) return "gpu_exact: no output";
  try {
    detail::exact_into<T>(s, d_in, n, d_out);
  } catch (const GpuError& e) {
    return e.what();
  }
  return "";
}

template <class T>
std::string gpu_exact_totals(const T* d_in, std::int64_t n, const LaunchShape& shape, Superaccumulator<T>& sum,
                             Superaccumulator<T>& sum_abs) {
  const LaunchShape s = canonicalize(GpuKernel::exact, shape);
  if (std::string why = validate_shape(GpuKernel::exact, s, FloatTraits<T>::dtype, n); !why.empty()) return why;
  if (s.block > 512) return "gpu_exact's sum of magnitudes takes blocks of at most 512 threads";
  try {
    detail::exact_totals<T>(s, d_in, n, sum, sum_abs);
  } catch (const GpuError& e) {
    return e.what();
  }
  return "";
}

template std::string gpu_exact_totals<float>(const float*, std::int64_t, const LaunchShape&, Superaccumulator<float>&,
                                             Superaccumulator<float>&);
template std::string gpu_exact_totals<double>(const double*, std::int64_t, const LaunchShape&, Superaccumulator<double>&,
                                              Superaccumulator<double>&);
template std::string gpu_exact_into<float>(const float*, std::int64_t, float*, const LaunchShape&);
template std::string gpu_exact_into<double>(const double*, std::int64_t, double*, const LaunchShape&);
template GpuSumResult<float> gpu_sum<float>(GpuKernel, const LaunchShape&, const DeviceBuffer<float>&, const KernelOptions&);
template GpuSumResult<double> gpu_sum<double>(GpuKernel, const LaunchShape&, const DeviceBuffer<double>&, const KernelOptions&);
template GpuSumResult<float> gpu_sum<float>(GpuKernel, const LaunchShape&, std::span<const float>, const KernelOptions&);
template GpuSumResult<double> gpu_sum<double>(GpuKernel, const LaunchShape&, std::span<const double>, const KernelOptions&);

}  // namespace sumlab::gpu
