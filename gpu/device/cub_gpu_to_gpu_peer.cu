// gpu_cub_gpu_to_gpu: cub::DeviceReduce::Sum asked for gpu_to_gpu determinism, CUB's reproducible
// floating-point accumulator (RFA: the inputs binned by exponent range and accumulated in a fixed,
// hardware-independent order; Demmel, Ahrens and Nguyen, "Efficient Reproducible Floating Point
// Summation and BLAS", 2020). A peer: measured, never modelled. Compiled against CCCL headers newer
// than the toolkit's (SUMLAB_CCCL_INCLUDE_DIR, cmake/SumlabCuda.cmake) and in a translation unit of
// its own, so that only CUB's versioned namespaces meet the toolkit's. This overload of Sum takes its
// temporary storage from the environment's memory resource (a stream-ordered pool), so every timed
// launch includes that allocation, as every user of the API pays it.
#include <cub/device/device_reduce.cuh>
#include <cuda/execution.determinism.h>
#include <cuda/std/execution>
#include <cuda/stream_ref>

#include "gpu/device/dispatch.cuh"

namespace sumlab::gpu::detail {

template <class T> LaunchOutcome<T> dispatch_cub_gpu_to_gpu(const LaunchInputs<T>& in, std::int64_t n) {
  T* d_out = nullptr;
  Carver c;
  c.add(&d_out, 1);
  c.commit();
  const auto env = ::cuda::std::execution::env{::cuda::execution::require(::cuda::execution::determinism::gpu_to_gpu),
                                               ::cuda::stream_ref{cudaStream_t{}}};
  LaunchOutcome<T> r;
  EventTimer timer;
  timer.start();
  for (int l = 0; l < in.launches; ++l) SUMLAB_CUDA_CHECK(cub::DeviceReduce::Sum(in.at(l), d_out, n, env));
  r.ms = timer.stop() / in.launches;
  r.value = copy_to_host(d_out);
  r.accumulator = static_cast<double>(r.value);
  return r;
}

template LaunchOutcome<float> dispatch_cub_gpu_to_gpu<float>(const LaunchInputs<float>&, std::int64_t);
template LaunchOutcome<double> dispatch_cub_gpu_to_gpu<double>(const LaunchInputs<double>&, std::int64_t);

}  // namespace sumlab::gpu::detail
