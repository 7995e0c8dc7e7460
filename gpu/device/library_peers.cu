// gpu_cub and gpu_thrust: the library reductions as peers. Their order is the library's (CUB's
// tuning policy for this GPU; thrust::reduce dispatches to CUB), so they are measured, never
// modelled. Built without --fmad=false (gpu/CMakeLists.txt): a sum has no multiply to contract, and
// the library is measured as users get it.
#include <cub/device/device_reduce.cuh>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>
#include <thrust/system/system_error.h>

#include "gpu/device/dispatch.cuh"

namespace sumlab::gpu::detail {

template <class T>
LaunchOutcome<T> dispatch_library(GpuKernel k, const LaunchInputs<T>& in, std::int64_t n) {
  LaunchOutcome<T> r;
  if (k == GpuKernel::cub) {
    std::size_t temp_bytes = 0;
    T* d_out = nullptr;
    SUMLAB_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in.at(0), d_out, n));
    void* d_temp = nullptr;
    Carver c;
    c.add(&d_out, 1).add(reinterpret_cast<unsigned char**>(&d_temp), temp_bytes);
    c.commit();
    EventTimer timer;
    timer.start();
    for (int l = 0; l < in.launches; ++l)
      SUMLAB_CUDA_CHECK(cub::DeviceReduce::Sum(d_temp, temp_bytes, in.at(l), d_out, n));
    r.ms = timer.stop() / in.launches;
    r.value = copy_to_host(d_out);
  } else if (k == GpuKernel::thrust) {
    EventTimer timer;
    timer.start();
    try {
      for (int l = 0; l < in.launches; ++l) r.value = thrust::reduce(thrust::device, in.at(l), in.at(l) + n, T(0));
    } catch (const thrust::system_error& e) {
      throw GpuError(std::string("thrust::reduce failed: ") + e.what());
    }
    r.ms = timer.stop() / in.launches;  // includes thrust's copy of the result to the host
  } else {
    throw GpuError("dispatch_library: not a library kernel");
  }
  r.accumulator = static_cast<double>(r.value);
  return r;
}

template LaunchOutcome<float> dispatch_library<float>(GpuKernel, const LaunchInputs<float>&, std::int64_t);
template LaunchOutcome<double> dispatch_library<double>(GpuKernel, const LaunchInputs<double>&, std::int64_t);

}  // namespace sumlab::gpu::detail
