#pragma once
// The row kernels: a rows x cols row-major matrix, one independent reduction per row (LayerNorm
// statistics, softmax, argmax), as real models run them: thousands of short rows at once.
//
// Registry (names, order of operations, declared determinism), the two layouts and the shape
// value shared by the CUDA launchers (gpu/rows.hpp) and the CPU model (row_model.hpp). Lives in
// core/ (no CUDA), so the model backend works everywhere.
//
// The order, common to every kernel (T = threads per row: 32 for warp_per_row, `block` for
// block_per_row; W = T / 32 warps per row):
//   chain   thread t of the row's group visits columns t, t + T, t + 2T, .. in increasing order
//           (coalesced), starting from the operation's identity; a thread with no column keeps it.
//   warp    XOR butterfly, m = 16, 8, 4, 2, 1: lane i computes combine(own, lane i ^ m's value).
//   block   block_per_row only: lane 0 of each warp writes its value to shared word w; after a
//           barrier EVERY warp loads words 0..W-1 into lanes 0..W-1 (identity in lanes >= W) and
//           runs the butterfly again (every warp computes the same values, so no broadcast
//           through shared memory is needed). Also run for block = 32 (W = 1).
//   result  lane 0's value, broadcast to the group with a shuffle: every thread of the row uses
//           the same bits. (Without the broadcast lanes could disagree: the Chan merge is not
//           bitwise commutative, so lane i and lane i ^ m of a butterfly may hold different bits.)
//   output  pass over the row again (same mapping): normalised x, or probabilities.
// So the bits depend on T (hence on layout and, for block_per_row, on the block size) and on cols,
// never on the run, the grid or the other rows: every kernel is `run_to_run`, and argmax, whose
// result is an input element chosen by a total order, is `shape_invariant`.
// warp_per_row packs block/32 rows into a block; that block size does not change any bit.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/determinism.hpp"

namespace sumlab::row_reduce {

enum class RowKernel {
  textbook,            // one pass: sum and sum of squares; var = E[x^2] - E[x]^2
  two_pass,            // mean first, then the mean of squared deviations
  welford,             // Welford per thread, general Chan-Golub-LeVeque merge in every tree node
  welford_equal,       // Welford per thread, equal-count lane merge where counts agree
  softmax_online,      // (max, sum exp) in one pass with rescaling, then the output pass
  softmax_three_pass,  // max, then sum exp(x - max), then the output pass
  argmax,              // (value, index), ties to the lower index, NaN is the maximum
};

enum class RowLayout { warp_per_row, block_per_row };

// What a kernel writes (rows = r, cols = c; Acc = float, or double for float64 input):
//   moments (textbook, two_pass, welford, welford_equal): mean[r], variance[r] (population, / c)
//     and out[r*c] = (x - mean) * rstd, rstd = 1 / sqrt(variance + eps), eps = 1e-5 (LayerNorm
//     without the affine part);
//   softmax: row_max[r], row_sum[r] (the online state (m, l), or the three-pass max and sum of
//     exp(x - max)) and out[r*c] = the probabilities;
//   argmax: max_value[r], max_index[r].
enum class RowFamily { moments, softmax, argmax };

struct RowKernelInfo {
  RowKernel kernel;
  std::string_view name;     // CLI / CSV name
  std::string_view summary;  // one line
  std::string_view order;    // the per-thread step and the tree node, in the notation above
  RowFamily family;
  Determinism determinism;   // declared; every one is modelled bit for bit (row_model.hpp)
  int passes;                // reads of the row (the output pass included)
};

std::span<const RowKernelInfo> row_kernels();
const RowKernelInfo& info(RowKernel k);
std::optional<RowKernel> find_row_kernel(std::string_view name);
std::string row_kernel_names();  // "textbook, two_pass, ..."

std::string_view to_string(RowLayout l);
std::optional<RowLayout> parse_row_layout(std::string_view s);

struct RowShape {
  RowLayout layout = RowLayout::warp_per_row;
  int block = 256;  // threads per block: a multiple of 32 in 32..1024
  friend bool operator==(const RowShape&, const RowShape&) = default;
  // Threads that share one row.
  int threads_per_row() const { return layout == RowLayout::warp_per_row ? 32 : block; }
  int rows_per_block() const { return layout == RowLayout::warp_per_row ? block / 32 : 1; }
};
// "warp_per_row/256", "block_per_row/1024".
std::string to_string(const RowShape& s);

// Largest cols: float accumulators count elements in float (Welford's n, the divisor), exact only
// up to 2^24; double accumulators up to 2^31 - 1 (the argmax index is a 32-bit int).
inline constexpr std::int64_t max_cols_float_acc = std::int64_t(1) << 24;
inline constexpr std::int64_t max_cols_double_acc = (std::int64_t(1) << 31) - 1;
inline constexpr std::int64_t max_grid = (std::int64_t(1) << 31) - 1;

// "" when the kernel can run the shape on a rows x cols matrix of dtype ("float32", "bfloat16",
// "float64"); otherwise one sentence naming the problem and what is accepted. rows = 0 and
// cols = 0 are valid: no rows is no work; an empty row has mean and variance NaN, row_max -Inf,
// row_sum 0, max_index -1 (max_value -Inf) and no outputs.
std::string validate_row_shape(RowKernel k, const RowShape& s, std::string_view dtype,
                               std::int64_t rows, std::int64_t cols);

// LayerNorm's epsilon for the normalised output (torch.nn.LayerNorm's default).
inline constexpr double layer_norm_eps = 1e-5;

}  // namespace sumlab::row_reduce
