#pragma once
// The bit-exact CPU model of every row kernel: for a (kernel, layout, block size, rows, cols) it
// performs the kernel's floating-point operations in the kernel's order (row_kernel.hpp for the
// order, row_tree.hpp for the trees, one header per arithmetic: welford.hpp, one_pass_moments.hpp,
// two_pass_moments.hpp, layer_norm.hpp, online_softmax.hpp, three_pass_softmax.hpp, argmax.hpp,
// whose SUMLAB_HD functions the CUDA kernels call too). `sumlab verify` / tests/gpu/rows_test.cpp
// check GPU bits == these bits (NaN == NaN) for every kernel over layouts, block sizes and shapes.
//
// In is float, double or bfloat16_bits (row_input.hpp); x is row-major rows x cols.
#include <cstdint>
#include <span>

#include "core/row_reduce/row_input.hpp"
#include "core/row_reduce/row_kernel.hpp"
#include "core/row_reduce/row_outputs.hpp"

namespace sumlab::row_reduce {

// Throws std::invalid_argument with validate_row_shape's sentence for a shape the kernel cannot
// run, or when x.size() != rows * cols. want_out = false skips the rows x cols output.
template <class In>
RowOutputs<row_acc_t<In>> model_rows(RowKernel k, const RowShape& shape, std::span<const In> x, std::int64_t rows,
                                     std::int64_t cols, bool want_out = true);

}  // namespace sumlab::row_reduce
