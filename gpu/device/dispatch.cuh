#pragma once
// Host dispatch shared by the launchers: the outcome of one sum, a grow-only device workspace (so a
// sweep of thousands of launches does not pay a cudaMalloc each), and a CUDA-event timer. Every
// function here throws GpuError (through SUMLAB_CUDA_CHECK) on failure; gpu_sum() turns that into
// GpuSumResult::error. Shapes reaching these functions were validated by gpu_sum().
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"
#include "gpu/cuda_check.cuh"

namespace sumlab::gpu::detail {

template <class T> struct LaunchOutcome {
  T value{};
  double accumulator = 0;
  float ms = 0;  // device time of one launch sequence (the mean over LaunchInputs::launches)
  std::string note;
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

// One device allocation, grown on demand and kept for the process (freed at exit).
class Workspace {
 public:
  ~Workspace() {
    if (ptr_) cudaFree(ptr_);  // at exit: nothing useful to do with an error here
  }
  // At least `bytes` bytes, 256-byte aligned; contents undefined; invalidated by the next call.
  void* reserve(std::size_t bytes) {
    if (bytes > bytes_) {
      if (ptr_) SUMLAB_CUDA_CHECK(cudaFree(ptr_));
      ptr_ = nullptr;
      bytes_ = 0;
      SUMLAB_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
      bytes_ = bytes;
    }
    return ptr_;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

inline Workspace& workspace() {
  static Workspace w;
  return w;
}

// Carves typed, 256-byte-aligned regions out of the workspace, in order.
class Carver {
 public:
  template <class T> Carver& add(T** out, std::size_t count) {
    if (n_ == max_regions) throw GpuError("Carver: more than " + std::to_string(max_regions) + " regions");
    offsets_[n_] = total_;
    slots_[n_++] = reinterpret_cast<void**>(out);
    total_ += (count * sizeof(T) + 255) / 256 * 256;
    return *this;
  }
  void commit() {
    char* base = static_cast<char*>(workspace().reserve(total_ == 0 ? 256 : total_));
    for (int i = 0; i < n_; ++i) *slots_[i] = base + offsets_[i];
  }

 private:
  static constexpr int max_regions = 12;
  void** slots_[max_regions] = {};
  std::size_t offsets_[max_regions] = {};
  int n_ = 0;
  std::size_t total_ = 0;
};

// Device time between start() and stop(), on the default stream (or the stream given to both).
class EventTimer {
 public:
  EventTimer() {
    SUMLAB_CUDA_CHECK(cudaEventCreate(&start_));
    SUMLAB_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start(cudaStream_t stream = nullptr) { SUMLAB_CUDA_CHECK(cudaEventRecord(start_, stream)); }
  float stop(cudaStream_t stream = nullptr) {
    SUMLAB_CUDA_CHECK(cudaEventRecord(stop_, stream));
    SUMLAB_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    SUMLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{};
  cudaEvent_t stop_{};
};

template <class T> T copy_to_host(const T* d) {
  T h{};
  SUMLAB_CUDA_CHECK(cudaMemcpy(&h, d, sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

// The launchers, one per family (T = input element type).
template <class T> LaunchOutcome<T> dispatch_shuffle(GpuKernel k, const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n);
template <class T> LaunchOutcome<T> dispatch_classic(GpuKernel k, const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n);
template <class T> LaunchOutcome<T> dispatch_exact(const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n);
template <class T> LaunchOutcome<T> dispatch_fixed_point(const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n,
                                                         const KernelOptions& opt);
template <class T> LaunchOutcome<T> dispatch_library(GpuKernel k, const LaunchInputs<T>& in, std::int64_t n);

// Runs kernel k (any family) over in: the switch gpu_sum() and the benchmark share.
template <class T> LaunchOutcome<T> dispatch(GpuKernel k, const LaunchShape& s, const LaunchInputs<T>& in, std::int64_t n,
                                             const KernelOptions& opt = {});

}  // namespace sumlab::gpu::detail
