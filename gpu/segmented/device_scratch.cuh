#pragma once
// An owned device allocation for the segmented launchers and peers: checked against free memory
// first, so "too big" is a sentence (GpuError), not a crash. nullptr for 0 bytes.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>

#include "gpu/cuda_check.cuh"
#include "gpu/gpu_sum.hpp"

namespace sumlab::gpu::seg_detail {

class DeviceScratch {
 public:
  DeviceScratch() = default;
  DeviceScratch(std::size_t bytes, const std::string& what) {
    if (bytes == 0) return;
    std::size_t free_b = 0, total_b = 0;
    SUMLAB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (bytes > free_b) {
      char buf[160];
      std::snprintf(buf, sizeof buf, " needs %.2f GiB of device memory, but only %.2f GiB are free",
                    double(bytes) / 1073741824.0, double(free_b) / 1073741824.0);
      throw GpuError(what + buf);
    }
    const cudaError_t e = cudaMalloc(&p_, bytes);
    if (e != cudaSuccess) {
      p_ = nullptr;
      cudaGetLastError();
      throw GpuError("cudaMalloc for " + what + " failed: " + cudaGetErrorString(e));
    }
  }
  ~DeviceScratch() {
    if (p_) cudaFree(p_);  // a destructor cannot report; the next checked call would
  }
  DeviceScratch(DeviceScratch&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  DeviceScratch& operator=(DeviceScratch&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  void* get() const { return p_; }
  template <class U> U* as() const { return static_cast<U*>(p_); }

 private:
  void* p_ = nullptr;
};

}  // namespace sumlab::gpu::seg_detail
