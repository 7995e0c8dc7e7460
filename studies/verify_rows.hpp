#pragma once
// The row kernels' part of `sumlab verify`: GPU bits == CPU model bits (core/row_reduce/
// row_model.hpp) for every row kernel (all are deterministic and modelled), over
//   dtypes   float32, bfloat16, float64
//   shapes   warp_per_row/32, warp_per_row/256, block_per_row/{32, 64, 96, 256, 1024}
//            (quick: warp_per_row/256, block_per_row/{32, 96, 256})
//   matrices rows x cols: 0x33, 1x0, 3x0, 5x1, 7x31, 7x32, 7x33, 2x4096, 3x4097, 130x257, 1x1000
//            (rows of 0 and 1 element; cols around the warp width; a row longer than the largest
//            block; 130 rows: a partly filled last block for warp_per_row/256)
//   inputs   normal (N(0,1)), offset (1e4 + N(0,1): the textbook formula's failure), specials
//            (per row: ties, a NaN, +Inf, -Inf runs, all -Inf, +-0 and subnormals)
// and compares every output (per-row statistics, argmax indices, the rows x cols output) bitwise,
// any NaN equal to any NaN. A case is one (kernel, dtype, shape, matrix, input).
// Without a GPU (or a CUDA build) the model side alone runs: every case must evaluate, and argmax
// must give the same (value, index) under every shape (it is declared shape_invariant).
//
// For cmd_verify.cpp:
//   const RowVerifySummary rows = verify_rows({.quick = o.quick, .csv = ...});
//   std::cout << rows.table();
//   if (!rows.ok()) exit code 1 (rows.error non-empty without a GPU: report it, as for the sums).
#include <cstdint>
#include <string>
#include <vector>

namespace sumlab {

struct RowVerifyOptions {
  bool quick = false;
  std::uint64_t seed = 1;
  std::string csv;                   // non-empty: one line per case written here
  std::vector<std::string> kernels;  // names (row_kernel.hpp); empty = all
  bool model_only = false;           // skip the GPU even if present
};

struct RowVerifyLine {
  std::string kernel;
  std::string dtype;
  long cases = 0;
  long mismatches = 0;  // cases whose GPU and model bits differ (model only: shape-invariance breaks)
  long errors = 0;      // cases that could not run (a GPU error, or the model refused a valid shape)
  std::string first_failure;
  long compared = 0;  // cases whose bits were compared (without a GPU: shape_invariant kernels only)
};

struct RowVerifySummary {
  using Line = RowVerifyLine;
  bool gpu = false;           // whether the GPU side ran
  std::string device;         // the GPU, or why it did not run
  std::vector<RowVerifyLine> lines;
  double seconds = 0;
  long cases() const;
  long mismatches() const;
  long errors() const;
  bool ok() const { return mismatches() == 0 && errors() == 0; }
  // "kernel  dtype  cases  mismatches  errors" lines, a total, and the first failure of each line.
  std::string table() const;
};

// Throws UserError for an unknown kernel name or an unwritable CSV.
RowVerifySummary verify_rows(const RowVerifyOptions& opts);

}  // namespace sumlab
