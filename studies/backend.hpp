#pragma once
// Where a GPU kernel's sum comes from: `cuda`, a real GPU (gpu/), or `model`, the CPU executing the
// kernel's exact order (core/order_model/). A study is written once against this interface; on a
// machine without a GPU the model backend gives the same bits for every deterministic kernel
// (that is what `sumlab verify` checks on a GPU).
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/gpu_kernel.hpp"
#include "core/launch_shape.hpp"

namespace sumlab {

enum class BackendKind { cuda, model };
std::string_view to_string(BackendKind b);

template <class T> struct KernelOutcome {
  bool has_value = false;  // false: not modelled (library peers on the model backend), or racy
  T value{};
  double accumulator = 0;  // gpu_double_acc: the double total before rounding; else the value
  double ms = 0;           // device time (cuda), or 0 (model)
  std::string note;        // e.g. the fixed-point scale, "one arrival order", why no value
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  std::string_view name() const { return to_string(kind()); }
  // "NVIDIA H200 (132 SMs, driver CUDA 13.0, runtime 13.0)" or "CPU model of the kernels' order".
  virtual std::string description() const = 0;
  // Multiprocessors, for default grids (4 blocks per SM): the GPU's, or 132 (an H200) for the model.
  virtual int sm_count() const = 0;
  // Throws UserError for a shape the kernel cannot run (validate_shape's sentence), options it does
  // not take (validate_options') or a GPU failure.
  virtual KernelOutcome<float> sum(GpuKernel k, const LaunchShape& s, std::span<const float> x,
                                   const KernelOptions& opt = {}) = 0;
  virtual KernelOutcome<double> sum(GpuKernel k, const LaunchShape& s, std::span<const double> x,
                                    const KernelOptions& opt = {}) = 0;
};

// "cuda", "model", or "" for the default: cuda when a usable GPU is present, else model.
// "cuda" without a GPU throws UserError("no CUDA device: <why>"); an unknown name lists the valid.
std::unique_ptr<Backend> make_backend(const std::string& name);

// Whether this build can talk to a GPU at all, and whether one is present now (with the reason).
bool cuda_backend_available(std::string* why = nullptr);

}  // namespace sumlab
