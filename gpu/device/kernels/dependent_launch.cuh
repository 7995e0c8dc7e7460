#pragma once
// Grid level: programmatic dependent launch (sm_90 and later). A kernel launched with
// cudaLaunchAttributeProgrammaticStreamSerialization may start once every block of the kernel
// before it in the stream has called let_dependents_start() or exited, instead of after that
// kernel ends; it must call wait_for_prerequisite_grid() before it reads what that kernel wrote
// (the wait returns when that grid has finished and its writes are visible). Both are no-ops for a
// kernel launched the ordinary way, and compile to nothing before sm_90, where the host launches
// the ordinary way (dependent_launch_supported).
#include <cuda_runtime.h>

#include "gpu/cuda_check.cuh"

namespace sumlab::gpu::detail {

__device__ __forceinline__ void let_dependents_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void wait_for_prerequisite_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Host side: whether the current device takes programmatic dependent launches (compute 9.0+).
inline bool dependent_launch_supported() {
  int device = 0, major = 0;
  SUMLAB_CUDA_CHECK(cudaGetDevice(&device));
  SUMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9;
}

}  // namespace sumlab::gpu::detail
