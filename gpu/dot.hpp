#pragma once
// The dot family on the GPU (core/dot/dot_family.hpp says what it computes and in which order; no
// CUDA types here). The pairs are uploaded once and read by every subject and shape.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/dot/dot_family.hpp"
#include "core/launch_shape.hpp"
#include "gpu/gpu_sum.hpp"  // GpuError

namespace sumlab::gpu {

class DotInput {
 public:
  // Throws GpuError when the pairs do not fit or the copy fails.
  explicit DotInput(std::span<const dot::Pair> pairs);
  ~DotInput();
  DotInput(const DotInput&) = delete;
  DotInput& operator=(const DotInput&) = delete;
  std::int64_t size() const;
  const dot::Pair* device_data() const;  // opaque to host code

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct GpuDotResult {
  float value = 0;
  double ms = 0;       // device time of one dot: the mean over `reps` launches after a warm-up
  std::string error;   // non-empty: nothing valid ran (a shape gpu_two_pass refuses, a CUDA error)
  bool ok() const { return error.empty(); }
};

// GPU subject k (gpu_dot or gpu_dot_fma) at shape s.
GpuDotResult gpu_dot(dot::Subject k, const LaunchShape& s, const DotInput& in, int reps = 1);

}  // namespace sumlab::gpu
