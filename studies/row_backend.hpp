#pragma once
// Where a row kernel runs for a study: `cuda` (gpu/rows.hpp, timed) or `model` (the CPU executing
// the kernel's exact order, core/row_reduce/row_model.hpp; no time). The input is uploaded once per
// RowRunner and reused by every kernel and shape. Same backend names and default as the sums'
// (studies/backend.hpp): cuda when a usable GPU is present, else model.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/row_reduce/row_input.hpp"
#include "core/row_reduce/row_kernel.hpp"
#include "core/row_reduce/row_outputs.hpp"
#include "studies/backend.hpp"

namespace sumlab {

// "cuda", "model" or "" (cuda when a GPU is usable, else model). "cuda" without one throws
// UserError("no CUDA device: ..."); an unknown name lists the valid ones.
BackendKind pick_row_backend(const std::string& name);
// "NVIDIA H200 (132 SMs, ...)" or "CPU model of the row kernels' order".
std::string row_backend_description(BackendKind kind);

template <class Acc> struct RowRun {
  row_reduce::RowOutputs<Acc> outputs;
  std::optional<double> ms;  // cuda: median device time of one launch; model: none
};

template <class In> class RowRunner {
 public:
  using Acc = row_reduce::row_acc_t<In>;
  // x must stay alive while the runner is used. Throws UserError on a GPU failure.
  RowRunner(BackendKind kind, std::span<const In> x, std::int64_t rows, std::int64_t cols);
  ~RowRunner();
  RowRunner(const RowRunner&) = delete;
  RowRunner& operator=(const RowRunner&) = delete;
  // Throws UserError for a shape the kernel cannot run (validate_row_shape's sentence) or a GPU
  // failure. reps: timed launches on cuda (ignored by the model).
  RowRun<Acc> run(row_reduce::RowKernel k, const row_reduce::RowShape& s, bool want_out, int reps = 1) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The device-to-device copy bandwidth in bytes/s (read + written), measured now on the cuda
// backend; none on the model backend. Throws UserError on a GPU failure.
std::optional<double> copy_bandwidth(BackendKind kind, std::size_t bytes);

}  // namespace sumlab
