#pragma once
// Where a row kernel reads its row from: the register slice, shared memory, or memory in every pass
// (how each works: gpu/rows/row_loads.cuh). The host decides once per launch (row_stage_bytes);
// plain C++, so that its rules are tested without a GPU (tests/gpu/rows_test.cpp).
#include <cstddef>
#include <cstdint>

#include "core/row_reduce/row_kernel.hpp"

namespace sumlab::gpu::rows {

// A register slice: 64 bytes of input a thread (32 bfloat16 values, 16 floats, 8 doubles).
inline constexpr int kRowSliceBytes = 64;
// A staged row: at most 256 bytes of it a thread (a row of 16384 floats at 256 threads, 64 KB a
// block, three blocks an SM). More would leave an SM too few rows in flight; such rows are read
// from memory in every pass instead.
inline constexpr int kRowStageThreadBytes = 256;
// Welford's count reciprocals (gpu/rows/moments_kernel.cuh): RN(1/k) for the steps k = 1 .. 512 of
// a thread, every shape the bench times (16 to 512 elements a thread).
inline constexpr int kRowCountTable = 512;
// The steps a thread's Welford fold unrolls whole, the counts' reciprocals constants, where every
// thread holds exactly this many elements or half as many (row_exact_steps below); from a stage
// also 64 or 128 (kRowExactStagedSteps), where the loads are shared memory's, not in flight.
inline constexpr int kRowExactSteps = 32;
inline constexpr int kRowExactStagedSteps = 128;
// A row kernel's static shared memory: 32 group states of up to 32 bytes (gpu/rows/row_tree.cuh),
// a staged kernel's 32 mbarriers (gpu/rows/row_loads.cuh) and a Welford kernel's reciprocals (as
// doubles at most).
inline constexpr std::size_t kRowStaticSmemBytes = 32 * 32 + 32 * 8 + kRowCountTable * 8;
// What the CUDA runtime reserves a block (1 KB on sm_80 and later).
inline constexpr std::size_t kRowRuntimeSmemBytes = 1024;

// Bytes of dynamic shared memory into which a block of kernel k copies its rows (in_bytes a value)
// before folding them, or 0 where it reads them from memory. Staged: bfloat16 rows, whose two-byte
// loads keep too few bytes in flight a thread (textbook rows of 16384 at 128 threads 0.79 of the
// read roof unstaged, 0.96 staged); float and double rows where the kernel passes over the row more
// than once (two_pass, three-pass softmax, every normalised output: `out`) and no register slice
// holds it (two_pass rows of 16384 at 256 threads 0.75 -> 0.99); float rows of the online softmax,
// whose loop is plain, its exp's registers leaving none for loads ahead (rows of 4096 at 2^28
// 0.67 -> 0.74; double rows not measured staged).
// Not staged: argmax (its words in any order), the other float and double kernels of one pass (a
// block then waits for its whole row before its first step: textbook rows of 4096 at 2^22 read
// 0.96 staged against 1.01; Welford's, whose loads run ahead, 0.75 -> 0.65), rows of which a thread's
// share exceeds kRowStageThreadBytes, and blocks of which two would not fit an SM (sm_bytes; optin:
// a block's most). Figures: docs/performance-notes.md.
inline std::size_t row_stage_bytes(row_reduce::RowKernel k, const row_reduce::RowShape& s, std::int64_t cols,
                                   std::size_t in_bytes, bool out, std::size_t sm_bytes, std::size_t optin) {
  using row_reduce::RowKernel;
  if (row_reduce::info(k).family == row_reduce::RowFamily::argmax || cols <= 0) return 0;
  const std::int64_t threads = s.threads_per_row();
  const auto size = static_cast<std::int64_t>(in_bytes);
  if (in_bytes > 2) {
    const bool online_float = k == RowKernel::softmax_online && in_bytes == 4;
    if (!out && k != RowKernel::two_pass && k != RowKernel::softmax_three_pass && !online_float) return 0;
    const bool sliced = k == RowKernel::textbook || k == RowKernel::two_pass;  // the batched folds
    if (sliced && cols * size <= std::int64_t(kRowSliceBytes) * threads) return 0;
  }
  if ((cols + threads - 1) / threads * size > kRowStageThreadBytes) return 0;
  const std::size_t bytes = std::size_t(s.rows_per_block()) * std::size_t(cols) * in_bytes;
  const std::size_t per_block = bytes + kRowStaticSmemBytes + kRowRuntimeSmemBytes;
  return bytes <= optin && 2 * per_block <= sm_bytes ? bytes : 0;
}

// The elements each thread of kernel k holds where its launch takes the Exact instance of the
// moments kernels (gpu/rows/moments_kernel.cuh), else 0: Welford's float and bfloat16 rows (a
// double's 32 loads in flight would take its warps' registers) where every thread of a group holds
// exactly kRowExactSteps elements or half as many (rows of 4096 at 128 or 256 threads), or, where
// the row is staged, 64 or 128 (rows of 16384 at 256 or 128 threads).
inline int row_exact_steps(row_reduce::RowKernel k, const row_reduce::RowShape& s, std::int64_t cols, std::size_t in_bytes,
                           bool staged = false) {
  using row_reduce::RowKernel;
  if ((k != RowKernel::welford && k != RowKernel::welford_equal) || in_bytes > 4 || cols <= 0) return 0;
  const std::int64_t threads = s.threads_per_row();
  if (threads <= 0 || cols % threads != 0) return 0;
  const std::int64_t steps = cols / threads;
  if (steps == kRowExactSteps || steps == kRowExactSteps / 2) return int(steps);
  return staged && (steps == kRowExactStagedSteps || steps == kRowExactStagedSteps / 2) ? int(steps) : 0;
}

// The thread count a launch's kernel instance fixes at compile time (row_group in
// gpu/rows/row_tree.cuh), else 0. Staged block_per_row launches of 128 or 256 threads, the fastest
// shapes of the staged kernels at the bench's rows of 4096 and 16384: a staged pass reads element
// t + iT of the stage, and with T a constant the loads of an unrolled loop are one shared address
// and immediate offsets, where a runtime T cost an integer instruction an element (a fifth of a
// bfloat16 two-pass loop's). Other shapes keep the instances that read blockDim.x: each fixed count
// is another copy of every staged kernel.
inline int row_fixed_threads(const row_reduce::RowShape& s, std::size_t stage) {
  if (stage == 0 || s.layout != row_reduce::RowLayout::block_per_row) return 0;
  return s.block == 128 || s.block == 256 ? s.block : 0;
}

}  // namespace sumlab::gpu::rows
