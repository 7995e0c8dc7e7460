// gpu_cub and gpu_thrust: the library reductions as peers (gpu_cub_gpu_to_gpu: its own file,
// cub_gpu_to_gpu_peer.cu). Their order is the library's (CUB's tuning policy for this GPU;
// thrust::reduce dispatches to CUB), so they are measured, never modelled. Built without
// --fmad=false (gpu/CMakeLists.txt): a sum has no multiply to contract, and the library is measured
// as users get it.
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
  } else if (k == GpuKernel::cub_gpu_to_gpu) {
    if (const std::string why = kernel_not_built(k); !why.empty()) throw GpuError(why);
    return dispatch_cub_gpu_to_gpu<T>(in, n);
  } else {
    throw GpuError("dispatch_library: not a library kernel");
  }
  r.accumulator = static_cast<double>(r.value);
  return r;
}

#if !defined(SUMLAB_HAVE_CUB_GPU_TO_GPU)
// Never called (kernel_not_built stops it first); defined so that the build links without the peer.
template <class T> LaunchOutcome<T> dispatch_cub_gpu_to_gpu(const LaunchInputs<T>&, std::int64_t) {
  throw GpuError(kernel_not_built(GpuKernel::cub_gpu_to_gpu));
}
template LaunchOutcome<float> dispatch_cub_gpu_to_gpu<float>(const LaunchInputs<float>&, std::int64_t);
template LaunchOutcome<double> dispatch_cub_gpu_to_gpu<double>(const LaunchInputs<double>&, std::int64_t);
#endif

template LaunchOutcome<float> dispatch_library<float>(GpuKernel, const LaunchInputs<float>&, std::int64_t);
template LaunchOutcome<double> dispatch_library<double>(GpuKernel, const LaunchInputs<double>&, std::int64_t);

}  // namespace sumlab::gpu::detail

namespace sumlab::gpu {

std::string kernel_not_built(GpuKernel k) {
#if !defined(SUMLAB_HAVE_CUB_GPU_TO_GPU)
  if (k == GpuKernel::cub_gpu_to_gpu)
    return "gpu_cub_gpu_to_gpu is not in this build: it needs CCCL >= 3.1 headers (CUDA 13.0 ships 3.0.1); "
           "scripts/cccl.sh installs PyPI's nvidia-cuda-cccl, or configure with -DSUMLAB_CCCL_INCLUDE_DIR=DIR";
#endif
  (void)k;
  return "";
}

}  // namespace sumlab::gpu
