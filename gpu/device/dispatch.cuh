#pragma once
// Host dispatch shared by the sum launchers: the outcome of one sum and the inputs of a timed
// sequence of launches (workspace, timer and copies are gpu/host's). Every
// function here throws GpuError (through SUMLAB_CUDA_CHECK) on failure; gpu_sum() turns that into
// GpuSumResult::error. Shapes reaching these functions were validated by gpu_sum().
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/exact_sum.hpp"
#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/host/cuda_host.cuh"

namespace sumlab::gpu::detail {

template <class T> struct LaunchOutcome {
  T value{};
  double accumulator = 0;
  float ms = 0;  // device time of one launch sequence (the mean over LaunchInputs::launches)
  std::string note;
  double quantisation = 0;  // gpu_fixed_point: its grid's error bound m * 2^(-k-1) (+inf on overflow)
  int input_reads = 1;      // GpuSumResult::input_reads
};

// What a timed sequence of launches reads: launch l reads the n elements at at(l). gpu_sum() runs
// one launch of one copy; the benchmark (gpu/bench.cu) runs many back to back, rotating through
// copies so that a launch does not find its input in L2 where the previous launch left it. The
// result (value, note) is the last launch's; ms is the events' time over all launches / launches.
template <class T> struct LaunchInputs {
  const T* base = nullptr;
  std::int64_t stride = 0;  // elements between copies
  int copies = 1;
  int launches = 1;
  const T* at(int l) const { return base + std::int64_t(l % copies) * stride; }
};

// The launchers, one per family (T = input element type).
template <class T> LaunchOutcome<T> dispatch_shuffle(GpuKernel k, const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n);
template <class T> LaunchOutcome<T> dispatch_classic(GpuKernel k, const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n);
template <class T> LaunchOutcome<T> dispatch_exact(const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n);
template <class T> LaunchOutcome<T> dispatch_fixed_point(const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n,
                                                         const KernelOptions& opt);
template <class T> LaunchOutcome<T> dispatch_library(GpuKernel k, const LaunchInputs<T>& in, std::int64_t n);
// gpu_cub_gpu_to_gpu (device/cub_gpu_to_gpu_peer.cu, built only with newer CCCL headers).
template <class T> LaunchOutcome<T> dispatch_cub_gpu_to_gpu(const LaunchInputs<T>& in, std::int64_t n);
// gpu_exact's sum of d_in into *d_out on the device, asynchronously on the default stream.
template <class T> void exact_into(const LaunchShape& s, const T* d_in, std::int64_t n, T* d_out);
template <class T>
void exact_totals(const LaunchShape& s, const T* d_in, std::int64_t n, Superaccumulator<T>& sum, Superaccumulator<T>& sum_abs);

// Runs kernel k (any family) over in: the switch gpu_sum() and the benchmark share.
template <class T> LaunchOutcome<T> dispatch(GpuKernel k, const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n,
                                             const KernelOptions& opt = {});

}  // namespace sumlab::gpu::detail
