#pragma once
// The row family's runners (studies/family_runner.hpp): a row kernel runs on `cuda` (gpu/rows.hpp,
// timed) or on `model` (the CPU executing the kernel's exact order, core/row_reduce/row_model.hpp;
// no time). Same backend names and default as the sums' (studies/backend.hpp): cuda when a usable
// GPU is present, else model.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/row_reduce/row_input.hpp"
#include "core/row_reduce/row_kernel.hpp"
#include "core/row_reduce/row_outputs.hpp"
#include "studies/backend.hpp"
#include "studies/external.hpp"
#include "studies/family_runner.hpp"

namespace sumlab {

// "cuda", "model" or "" (cuda when a GPU is usable, else model). "cuda" without one throws
// UserError("no CUDA device: ..."); an unknown name lists the valid ones.
BackendKind pick_row_backend(const std::string& name);
// "NVIDIA H200 (132 SMs, ...)" or "CPU model of the row kernels' order".
std::string row_backend_description(BackendKind kind);

// The row family's input: the matrix on a backend, uploaded once for cuda and read by every kernel
// and shape.
template <class In> class RowKernelInput : public InputIdentity {
 public:
  using Acc = row_reduce::row_acc_t<In>;
  // x must stay alive and unchanged while the input is used. Throws UserError on a GPU failure.
  RowKernelInput(BackendKind kind, std::span<const In> x, std::int64_t rows, std::int64_t cols);
  ~RowKernelInput();
  RowKernelInput(const RowKernelInput&) = delete;
  RowKernelInput& operator=(const RowKernelInput&) = delete;
  BackendKind backend() const;
  // The matrix on the host (what a user's row subject reads), and its size.
  std::span<const In> host() const;
  std::int64_t rows() const;
  std::int64_t cols() const;
  // Kernel k at shape s: on cuda the median device time of `reps` launches; on the model, no time.
  // Throws UserError for a shape the kernel cannot run (validate_row_shape's sentence) or a GPU
  // failure.
  Outcome<row_reduce::RowOutputs<Acc>> run(row_reduce::RowKernel k, const row_reduce::RowShape& s, bool want_out,
                                           int reps = 1) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

template <class In>
using RowRunner = FamilyRunner<RowKernelInput<In>, row_reduce::RowOutputs<row_reduce::row_acc_t<In>>>;

// Row kernel k on `backend` (cuda or model), one configuration per shape. want_out: the per-element
// outputs too (layer norm, softmax), not only the per-row ones; reps: timed launches on cuda.
template <class In>
std::unique_ptr<RowRunner<In>> row_runner(row_reduce::RowKernel k, BackendKind backend,
                                          std::vector<row_reduce::RowShape> shapes, bool want_out, int reps = 1);

// A user's row subject (studies/external.hpp: kind variance, layer_norm or softmax) as a runner of
// the family: it reads the host's matrix and fills `variance` (variance) or `out` (the others) in
// Acc; a failed call (it threw, returned another length, NaN for finite input, a value not of Acc's)
// is an outcome with its message. input_finite: every element is finite.
template <class In>
std::unique_ptr<RowRunner<In>> external_row_runner(std::shared_ptr<ExternalArray> s, bool input_finite);

// The device-to-device copy bandwidth in bytes/s (read + written), measured now on the cuda
// backend; none on the model backend. Throws UserError on a GPU failure.
std::optional<double> copy_bandwidth(BackendKind kind, std::size_t bytes);

}  // namespace sumlab
