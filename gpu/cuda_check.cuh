#pragma once
// Every CUDA runtime call in gpu/ goes through SUMLAB_CUDA_CHECK: a failure becomes a GpuError
// naming the call, its file:line and CUDA's error name and description. The public entry points
// (gpu_sum.cu) catch it and return it as GpuSumResult::error, so a bad launch is a message.
#include <cuda_runtime.h>

#include <string>

#include "gpu/gpu_sum.hpp"

namespace sumlab::gpu::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  throw GpuError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                 cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

inline void cuda_check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess) throw_cuda_error(e, call, file, line);
}

}  // namespace sumlab::gpu::detail

#define SUMLAB_CUDA_CHECK(call) ::sumlab::gpu::detail::cuda_check((call), #call, __FILE__, __LINE__)
// After a <<<...>>> launch: configuration errors surface at once, execution errors at the next
// synchronising call (which is checked too).
#define SUMLAB_CUDA_CHECK_LAUNCH(what) \
  ::sumlab::gpu::detail::cuda_check(cudaGetLastError(), "launch of " what, __FILE__, __LINE__)
