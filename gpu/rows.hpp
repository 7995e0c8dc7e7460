#pragma once
// The row kernels on the GPU behind a plain C++ API (no CUDA types: studies/ and tests build with
// the host compiler). A rows x cols row-major matrix, one reduction per row: LayerNorm statistics
// and output (textbook, two_pass, welford, welford_equal), softmax (online, three-pass), argmax.
// Kernels, their order, layouts and shape rules: core/row_reduce/row_kernel.hpp; the bit-exact CPU
// model of each: core/row_reduce/row_model.hpp.
//
// Shapes: rows >= 0 and cols >= 0 (both 0 allowed: no rows is no launch; an empty row's results
// are defined in row_kernel.hpp); block a multiple of 32 in 32..1024; cols <= 2^24 for float32 and
// bfloat16 inputs (float accumulators count exactly only that far), <= 2^31 - 1 for float64; the
// grid (rows, or rows / (block/32) for warp_per_row) <= 2^31 - 1; input and outputs must fit in
// free device memory. Anything else comes back as GpuRowsResult::error, one sentence, as do CUDA
// failures (with the file:line of the call); nothing crashes or hangs.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/row_reduce/row_input.hpp"
#include "core/row_reduce/row_kernel.hpp"
#include "core/row_reduce/row_outputs.hpp"
#include "gpu/gpu_sum.hpp"  // GpuError, gpu_available

namespace sumlab::gpu {

// A rows x cols matrix of In (float, double, row_reduce::bfloat16_bits) resident on the device,
// uploaded once and reused by every kernel and shape. With copies > 1 the device holds that many
// copies of it and a timed run of launches reads them in turn, as the sums' bench rotates its
// inputs, so that a matrix smaller than the L2 is not read from the L2 by the next launch: every
// copy holds the same values, so every launch gives the same results. Throws GpuError when it does
// not fit or a CUDA call fails, std::invalid_argument when host.size() != rows * cols or copies < 1.
template <class In> class RowMatrix {
 public:
  RowMatrix(std::span<const In> host, std::int64_t rows, std::int64_t cols, int copies = 1);
  ~RowMatrix();
  RowMatrix(RowMatrix&&) noexcept;
  RowMatrix& operator=(RowMatrix&&) noexcept;
  RowMatrix(const RowMatrix&) = delete;
  RowMatrix& operator=(const RowMatrix&) = delete;
  std::int64_t rows() const;
  std::int64_t cols() const;
  int copies() const;
  const In* device_data(int copy = 0) const;  // opaque to host code

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct RowRunOptions {
  bool want_out = true;  // write (and download) the rows x cols output
  int reps = 1;          // timed samples, median reported; > 1: each a run of launches back to back
                         // (detail::time_back_to_back), 1: one launch timed alone
};

template <class Acc> struct GpuRowsResult {
  row_reduce::RowOutputs<Acc> outputs;  // from the last launch
  double ms = 0;                        // median device time of one launch (CUDA events)
  std::string error;                    // non-empty: nothing valid ran
  bool ok() const { return error.empty(); }
};

template <class In>
GpuRowsResult<row_reduce::row_acc_t<In>> gpu_rows(row_reduce::RowKernel k, const row_reduce::RowShape& s,
                                                  const RowMatrix<In>& x, const RowRunOptions& opts = {});

// Uploads first (one allocation per call; prefer the RowMatrix overload in loops).
template <class In>
GpuRowsResult<row_reduce::row_acc_t<In>> gpu_rows(row_reduce::RowKernel k, const row_reduce::RowShape& s,
                                                  std::span<const In> x, std::int64_t rows, std::int64_t cols,
                                                  const RowRunOptions& opts = {});

// The row kernels' exp (row_reduce::acc_exp: portable_expf_nonpositive for float, portable_exp for
// double) evaluated on the device, y[i] = acc_exp(x[i]): the CPU model reproduces the kernels' bits
// only if this function gives the CPU's bits, which a test checks over every float.
template <class Acc> struct GpuExpResult {
  std::vector<Acc> y;
  std::string error;  // non-empty: nothing valid ran
  bool ok() const { return error.empty(); }
};
template <class Acc> GpuExpResult<Acc> gpu_row_exp(std::span<const Acc> x);

// The device-to-device copy bandwidth, the memory-bound roof a row kernel is measured against:
// cudaMemcpyDeviceToDevice of `bytes`, timed as the kernels are (`reps` samples, at least 2, of
// copies back to back: detail::time_back_to_back); bytes_per_s counts
// the bytes read plus the bytes written (2 * bytes) over the median time.
struct CopyBandwidth {
  double bytes_per_s = 0;
  double ms = 0;  // median time of one copy
  std::size_t bytes = 0;
  std::string error;
  bool ok() const { return error.empty(); }
};
CopyBandwidth measure_copy_bandwidth(std::size_t bytes, int reps = 20);

}  // namespace sumlab::gpu
