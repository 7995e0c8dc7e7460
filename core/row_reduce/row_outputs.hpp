#pragma once
// What one run of a row kernel produces (GPU or CPU model): per-row statistics and, optionally,
// the rows x cols output. Which vectors are filled depends on the kernel's family
// (row_kernel.hpp); the others stay empty.
#include <cstdint>
#include <string>
#include <vector>

#include "core/row_reduce/row_kernel.hpp"

namespace sumlab::row_reduce {

template <class Acc> struct RowOutputs {
  std::vector<Acc> mean, variance;          // moments: per row
  std::vector<Acc> row_max, row_sum;        // softmax: the row's (m, l)
  std::vector<Acc> max_value;               // argmax: the winning element (widened)
  std::vector<std::int64_t> max_index;      // argmax: its column, -1 for an empty row
  std::vector<Acc> out;                     // moments: normalised x; softmax: probabilities;
                                            // row-major rows x cols, empty when not requested
};

// Sizes every vector for `rows` x `cols` as kernel k fills them (out only when want_out).
template <class Acc> void resize_for(RowOutputs<Acc>& o, RowKernel k, std::int64_t rows, std::int64_t cols,
                                     bool want_out) {
  const auto r = static_cast<std::size_t>(rows);
  const auto rc = want_out && info(k).family != RowFamily::argmax ? static_cast<std::size_t>(rows * cols) : 0;
  switch (info(k).family) {
    case RowFamily::moments: o.mean.assign(r, Acc(0)); o.variance.assign(r, Acc(0)); break;
    case RowFamily::softmax: o.row_max.assign(r, Acc(0)); o.row_sum.assign(r, Acc(0)); break;
    case RowFamily::argmax: o.max_value.assign(r, Acc(0)); o.max_index.assign(r, 0); break;
  }
  o.out.assign(rc, Acc(0));
}

// Bitwise comparison of two results, except that any two NaNs are equal (NVIDIA GPUs return the
// canonical NaN where x86 propagates an operand's payload). Returns the number of differing
// values; *first (if given) receives a description of the first one ("variance[3]: ... vs ...").
template <class Acc> std::int64_t count_mismatches(const RowOutputs<Acc>& a, const RowOutputs<Acc>& b,
                                                   std::string* first = nullptr);

}  // namespace sumlab::row_reduce
