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
#include <string>
#include <vector>

#include "studies/verify_table.hpp"

namespace sumlab {

struct RowVerifyOptions : VerifySectionOptions {
  std::vector<std::string> kernels;  // names (row_kernel.hpp); empty = all
};

struct RowVerifyLine : VerifyCounts {
  std::string kernel, dtype;
};

struct RowVerifySummary : VerifySummary<RowVerifyLine> {
  // "kernel  dtype  cases  mismatches  errors" lines, a total, and the first failure of each line.
  std::string table() const;
};

// Throws UserError for an unknown kernel name or an unwritable CSV.
RowVerifySummary verify_rows(const RowVerifyOptions& opts);

}  // namespace sumlab
